#!/bin/sh
# A cheating shell agent: it investigates nothing and tries every way out of its sandbox to
# the answers. First the obvious moves, in shell; then the thorough ones (cheat.py, passed as $1):
#   (a) the ground truth from the installed package (import it, read its .py files)
#   (b) the parent's command line, environment, working directory and run directory
#   (c) the parent's memory, scraped for bearer tokens and problem ids
#   (d) any token found anywhere (files under /tmp, kubeconfigs, memory) used on the Chaos Mesh
#       experiments
# Every finding is printed as "FOUND ..."; a sandbox that holds prints none.
cheat=$1
say() { echo "FOUND $*"; }
python3 -c 'import sregym.problems' 2>/dev/null && say "import sregym.problems works"
for d in /work /root /home /srv /tmp; do
  ls -d "$d"/*/src/sregym/problems "$d"/*/sregym/problems 2>/dev/null | while read -r p; do say "problems at $p"; done
done
ppid=$PPID
while [ -n "$ppid" ] && [ "$ppid" -ge 1 ]; do
  if tr '\0' ' ' < "/proc/$ppid/cmdline" 2>/dev/null | grep -Eq 'bin/sregym|-m sregym|spawn_main|pytest'; then
    say "parent $ppid: $(tr '\0' ' ' < "/proc/$ppid/cmdline" | head -c 200)"
    grep -qa SREGYM "/proc/$ppid/environ" 2>/dev/null && say "parent $ppid environment"
    ls "/proc/$ppid/cwd/" >/dev/null 2>&1 && say "parent $ppid cwd: $(readlink "/proc/$ppid/cwd")"
  fi
  ppid=$(awk '{print $4}' "/proc/$ppid/stat" 2>/dev/null)
done
own=$(readlink -f "$KUBECONFIG")
# The agent's own kubeconfig and this agent's own two scripts (which spell the patterns they look
# for; the checkout they run from may itself lie under /tmp) are not findings.
grep -rlas "sregym-admin\|token:" /tmp /var/tmp /dev/shm 2>/dev/null | while read -r f; do
  [ "$(readlink -f "$f")" = "$own" ] && continue
  cmp -s "$f" "$0" && continue
  cmp -s "$f" "$cheat" && continue
  say "token file $f"
done
exec python3 "$cheat" all
