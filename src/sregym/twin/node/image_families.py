"""Which executables an image ships, and where on its PATH they are.

A tool an engineer types into `kubectl exec` exists or not depending on the image, not on what
the twin happens to emulate: `sort` is there in a Debian-based image and in BusyBox, and "not
found" in a distroless one; `curl` is in the nginx image but not in plain Debian, and `ps` is
BusyBox's applet in Alpine. So every image belongs to a *family* (its base userland) and
adds its own programs; `executables(image, spec)` gives the name -> absolute path map that exec,
the shell's command lookup, `which`, `command -v` and `type` all read, so they agree.

Families:
- `busybox`: the official busybox image, every applet of BusyBox 1.36's default build in /bin.
- `alpine`: Alpine's BusyBox (a smaller applet set spread over /bin, /sbin, /usr/bin, /usr/sbin)
  plus apk and musl-utils.
- `debian` (and `ubuntu`): the base image's essential packages (coreutils, findutils, grep, sed,
  mawk as awk, diffutils, gzip, tar, bash, dash as sh, hostname, util-linux, debianutils, libc-bin)
  and procps. Merged /usr, so with the default PATH everything resolves under /usr/bin or
  /usr/sbin. No curl, wget, ping, ip, ss, netstat, dig or jq unless the image installs them.
- `distroless`: no shell and no tools; only the image's own binaries.

The family of an image comes from `ImageSpec.extras["family"]` when set, else from its tag
(`-alpine`, `busybox`), else from its shell (`""` is distroless, `ash` Alpine, `dash` Debian).
Per-repository additions (the server and its clients, the tools the Dockerfile installs) are in
`_ADDITIONS`; an image can add more with `extras["add_binaries"]` (names in /usr/bin, or
paths). An explicit `ImageSpec.extras["binaries"]` list still wins over all of this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

BUSYBOX, ALPINE, DEBIAN, UBUNTU, DISTROLESS = "busybox", "alpine", "debian", "ubuntu", "distroless"

# The text filters other modules register are listed too: the family decides, not the emulation.
_BUSYBOX_APPLETS = """
[ [[ acpid add-shell addgroup adduser adjtimex ar arch arp arping ascii ash awk base32 base64
basename bc beep blkdiscard blkid blockdev bootchartd brctl bunzip2 busybox bzcat bzip2 cal cat chat
chattr chgrp chmod chown chpasswd chpst chroot chrt chvt cksum clear cmp comm conspy cp cpio crc32
crond crontab cryptpw cttyhack cut date dc dd deallocvt delgroup deluser depmod devmem df dhcprelay
diff dirname dmesg dnsd dnsdomainname dos2unix dpkg dpkg-deb du dumpkmap dumpleases echo ed egrep
eject env envdir envuidgid ether-wake expand expr factor fakeidentd fallocate false fatattr fbset
fbsplash fdflush fdformat fdisk fgconsole fgrep find findfs flock fold free freeramdisk fsck
fsck.minix fsfreeze fstrim fsync ftpd ftpget ftpput fuser getfattr getopt getty grep groups gunzip
gzip halt hd hdparm head hexdump hexedit hostid hostname httpd hush hwclock i2cdetect i2cdump i2cget
i2cset i2ctransfer id ifconfig ifdown ifenslave ifplugd ifup inetd init insmod install ionice iostat
ip ipaddr ipcalc ipcrm ipcs iplink ipneigh iproute iprule iptunnel kbd_mode kill killall killall5
klogd last less link linux32 linux64 linuxrc ln loadfont loadkmap logger login logname logread
losetup lpd lpq lpr ls lsattr lsmod lsof lspci lsscsi lsusb lzcat lzma lzop lzopcat makedevs
makemime man md5sum mdev mesg microcom mim mkdir mkdosfs mke2fs mkfifo mkfs.ext2 mkfs.minix
mkfs.vfat mknod mkpasswd mkswap mktemp modinfo modprobe more mount mountpoint mpstat mt mv nameif
nanddump nandwrite nbd-client nc netstat nice nl nmeter nohup nologin nproc nsenter nslookup ntpd
nuke od openvt partprobe passwd paste patch pgrep pidof ping ping6 pipe_progress pivot_root pkill
pmap popmaildir poweroff powertop printenv printf ps pscan pstree pwd pwdx raidautorun rdate rdev
readahead readlink readprofile realpath reboot reformime remove-shell renice reset resize resume rev
rm rmdir rmmod route rpm rpm2cpio rtcwake run-init run-parts runlevel runsv runsvdir rx script
scriptreplay sed sendmail seq setarch setconsole setfattr setfont setkeycodes setlogcons setpriv
setserial setsid setuidgid sh sha1sum sha256sum sha3sum sha512sum showkey shred shuf slattach sleep
smemcap softlimit sort split ssl_client start-stop-daemon stat strings stty su sulogin sum sv svc
svlogd svok swapoff swapon switch_root sync sysctl syslogd tac tail tar taskset tc tcpsvd tee telnet
telnetd test tftp tftpd time timeout top touch tr traceroute traceroute6 tree true truncate ts tty
ttysize tunctl ubiattach ubidetach ubimkvol ubirename ubirmvol ubirsvol ubiupdatevol udhcpc udhcpc6
udhcpd udpsvd uevent umount uname unexpand uniq unix2dos unlink unlzma unshare unxz unzip uptime
users usleep uudecode uuencode vconfig vi vlock volname w wall watch watchdog wc wget which who
whoami whois xargs xxd xz xzcat yes zcat zcip
"""

# Alpine's BusyBox build, by install directory, plus apk-tools, musl-utils and scanelf.
_ALPINE_DIRS = {
    "/bin": """arch ash base64 bbconfig cat chattr chgrp chmod chown cp date dd df dmesg
        dnsdomainname dumpkmap echo ed egrep false fatattr fdflush fgrep fsync getopt grep gunzip
        gzip hostname ionice iostat ipcalc kbd_mode kill link linux32 linux64 ln login ls lsattr
        lzop makemime mkdir mknod mktemp more mount mountpoint mpstat mv netstat nice pidof ping
        ping6 pipe_progress printenv ps pwd reformime rev rm rmdir run-parts sed setpriv setserial
        sh sleep stat stty su sync tar touch true umount uname usleep watch zcat busybox""",
    "/sbin": """acpid adjtimex apk arp blkid blockdev depmod fbsplash fdisk findfs fsck fstrim
        getty halt hwclock ifconfig ifdown ifenslave ifup init inotifyd insmod ip ipaddr iplink
        ipneigh iproute iprule iptunnel klogd ldconfig loadkmap logread losetup lsmod mdev mkdosfs
        mkfs.vfat mkswap modinfo modprobe nameif pivot_root poweroff raidautorun reboot rmmod route
        setconsole slattach swapoff swapon switch_root sysctl syslogd tunctl udhcpc vconfig
        watchdog""",
    "/usr/bin": """[ [[ awk basename bc beep blkdiscard bunzip2 bzcat bzip2 cal chvt cksum clear
        cmp comm cpio crontab cryptpw cut dc deallocvt diff dirname dos2unix du eject env expand
        expr factor fallocate find flock fold free fuser getconf getent groups hd head hexdump
        hostid iconv id install ipcrm ipcs killall last ldd less logger lsof lsusb lzcat lzma
        lzopcat md5sum mesg microcom mkfifo mkpasswd nc nl nmeter nohup nproc nsenter nslookup od
        openvt paste pgrep pkill pmap printf pscan pstree pwdx readlink realpath renice reset
        resize scanelf seq setkeycodes setsid sha1sum sha256sum sha3sum sha512sum showkey shred
        shuf sort split ssl_client strings sum tac tail tee test time timeout top tr traceroute
        traceroute6 tree truncate tty ttysize unexpand uniq unix2dos unlink unlzma unlzop unshare
        unxz unzip uptime uudecode uuencode vi vlock volname wc wget which who whoami whois xargs
        xxd xzcat yes""",
    "/usr/sbin": """addgroup adduser arping brctl chpasswd chroot crond delgroup deluser
        ether-wake fbset killall5 loadfont nanddump nandwrite nbd-client ntpd partprobe rdate
        readahead readprofile remove-shell sendmail setfont setlogcons""",
}

# debian:bookworm's essential packages (and procps), every one under /usr with merged /usr.
_DEBIAN_DIRS = {
    "/usr/bin": """[ arch b2sum base32 base64 basename basenc cat chcon chgrp chmod chown cksum
        comm cp csplit cut date dd df dir dircolors dirname du echo env expand expr factor false
        fmt fold groups head hostid id install join link ln logname ls md5sum mkdir mkfifo mknod
        mktemp mv nice nl nohup nproc numfmt od paste pathchk pinky pr printenv printf ptx pwd
        readlink realpath rm rmdir runcon seq sha1sum sha224sum sha256sum sha384sum sha512sum
        shred shuf sleep sort split stat stdbuf stty sum sync tac tail tee test timeout touch tr
        true truncate tsort tty uname unexpand uniq unlink users vdir wc who whoami yes
        find xargs grep egrep fgrep rgrep sed awk mawk diff diff3 cmp sdiff
        gzip gunzip zcat zcmp zdiff zegrep zfgrep zforce zgrep zless zmore znew gzexe uncompress
        tar bash sh dash rbash hostname dnsdomainname domainname nisdomainname ypdomainname
        dmesg findmnt lsblk more mount umount mountpoint su login wdctl
        chrt fallocate flock getopt ionice ipcmk ipcrm ipcs last lastb lscpu lsipc lslocks
        lslogins lsmem lsns mcookie mesg namei nsenter prlimit rename.ul rev setarch setpriv
        setsid setterm taskset unshare utmpdump whereis logger renice script scriptlive
        scriptreplay wall
        ps top free uptime vmstat w watch pgrep pkill pidof pmap pwdx slabtop tload kill skill
        snice pidwait
        which run-parts tempfile savelog ischroot clear tput reset infocmp tabs toe tset
        getent getconf iconv ldd locale localedef catchsegv zdump
        perl perl5.36.0 apt apt-get apt-cache apt-config apt-mark dpkg dpkg-query dpkg-deb
        dpkg-divert dpkg-split dpkg-statoverride dpkg-trigger dpkg-maintscript-helper
        chage chfn chsh expiry gpasswd newgrp passwd faillog lastlog""",
    "/usr/sbin": """chroot sysctl killall5 runuser agetty blkid blockdev fdisk sfdisk fsck
        losetup mkswap swapon swapoff pivot_root switch_root wipefs ldconfig start-stop-daemon
        add-shell remove-shell update-alternatives adduser addgroup deluser delgroup useradd
        userdel usermod groupadd groupdel groupmod nologin chpasswd chgpasswd pwck grpck
        shadowconfig installkernel dpkg-preconfigure dpkg-reconfigure rmt""",
}


def _paths(dirs: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for directory, names in dirs.items():
        for name in names.split():
            out.setdefault(name, f"{directory}/{name}")
    return out


FAMILY_BINARIES: dict[str, dict[str, str]] = {
    BUSYBOX: {name: f"/bin/{name}" for name in _BUSYBOX_APPLETS.split()},
    ALPINE: _paths(_ALPINE_DIRS),
    DEBIAN: _paths(_DEBIAN_DIRS),
    UBUNTU: _paths(_DEBIAN_DIRS),
    DISTROLESS: {},
}

# What the repository's Dockerfile adds on top of its base, name -> path. An entry "name" with no
# directory puts the image's binary in /usr/local/bin (where docker-library images install them).
# golang:1.21 (buildpack-deps:bookworm-scm). `nc` is NOT in the real image; it stays here because
# the `deployment_reaches` mitigation check execs `nc -z` in these pods (that check should move to
# a probe pod; until then removing it would fail every problem that uses the check).
_GO_TOOLS = "/usr/bin/curl /usr/bin/wget /usr/bin/git /usr/bin/ssh /usr/bin/scp /usr/bin/gpg " \
            "/usr/local/go/bin/go /usr/local/go/bin/gofmt /usr/bin/nc"
_ADDITIONS: dict[str, str] = {
    "docker.io/library/nginx": "/usr/sbin/nginx /usr/sbin/nginx-debug /usr/bin/curl "
                               "/usr/bin/envsubst /docker-entrypoint.sh",
    "docker.io/library/redis": "redis-server redis-cli redis-benchmark redis-check-aof "
                               "redis-check-rdb redis-sentinel gosu docker-entrypoint.sh",
    "docker.io/valkey/valkey": "valkey-server valkey-cli valkey-benchmark valkey-check-aof "
                               "valkey-check-rdb valkey-sentinel redis-server redis-cli "
                               "redis-benchmark gosu docker-entrypoint.sh",
    "docker.io/library/memcached": "memcached docker-entrypoint.sh",
    "docker.io/library/mongo": "/usr/bin/mongod /usr/bin/mongos /usr/bin/mongodump "
                               "/usr/bin/mongorestore /usr/bin/mongoexport /usr/bin/mongoimport "
                               "/usr/bin/mongostat /usr/bin/mongotop /usr/bin/bsondump "
                               "/usr/bin/mongofiles /usr/bin/jq /usr/bin/numactl gosu "
                               "docker-entrypoint.sh",
    "docker.io/library/postgres": "/usr/bin/psql /usr/bin/pg_dump /usr/bin/pg_dumpall "
                                  "/usr/bin/pg_restore /usr/bin/pg_isready /usr/bin/createdb "
                                  "/usr/bin/dropdb /usr/bin/createuser /usr/bin/dropuser "
                                  "/usr/lib/postgresql/17/bin/postgres /usr/lib/postgresql/17/bin/pg_ctl "
                                  "/usr/lib/postgresql/17/bin/initdb gosu docker-entrypoint.sh",
    "docker.io/library/python": "python python3 pip pip3 " + "/usr/bin/curl /usr/bin/wget /usr/bin/git",
    "docker.io/curlimages/curl": "/usr/bin/curl /entrypoint.sh",
    "docker.io/polinux/stress": "/usr/local/bin/stress",
    "docker.io/hashicorp/consul": "/bin/consul /usr/bin/curl /usr/bin/jq /usr/bin/dumb-init "
                                  "/sbin/su-exec /usr/bin/openssl /sbin/iptables docker-entrypoint.sh",
    "docker.io/prom/prometheus": "/bin/prometheus /bin/promtool",
    "quay.io/prometheus/prometheus": "/bin/prometheus /bin/promtool",
    "registry.k8s.io/kube-proxy": "/usr/local/bin/kube-proxy /usr/sbin/iptables /usr/sbin/ip6tables "
                                  "/usr/sbin/iptables-save /usr/sbin/iptables-restore "
                                  "/usr/sbin/conntrack /usr/sbin/ipset",
    "docker.io/yinfangchen/hotelreservation": _GO_TOOLS,
    "docker.io/deathstarbench/hotel-reservation": _GO_TOOLS,
    "docker.io/jackcuii/hotel-reservation": _GO_TOOLS,
    "docker.io/yinfangchen/geo": _GO_TOOLS,
}

# Where an image's own programs live when the Dockerfile does not use /usr/local/bin.
_OWN_DIRS: dict[str, str] = {repo: "/go/bin" for repo in (
    "docker.io/yinfangchen/hotelreservation", "docker.io/deathstarbench/hotel-reservation",
    "docker.io/jackcuii/hotel-reservation", "docker.io/yinfangchen/geo")}

# Images whose Dockerfile starts FROM a base the shell field alone does not tell.
_FAMILIES: dict[str, str] = {
    "docker.io/library/mongo": UBUNTU,
    "docker.io/prom/prometheus": BUSYBOX,
    "quay.io/prometheus/prometheus": BUSYBOX,
    # distroless-iptables: a shell and the iptables tools, nothing of a distribution's userland.
    "registry.k8s.io/kube-proxy": DISTROLESS,
}
# Images with a shell binary although their base is distroless (kube-proxy's iptables wrapper).
_SHELLS: dict[str, str] = {"registry.k8s.io/kube-proxy": "/bin/sh /bin/dash"}

_ALPINE_TAG = re.compile(r"(^|-)alpine")
_SLIM_TAG = re.compile(r"(^|-)slim")


@dataclass(frozen=True)
class _Image:
    repository: str
    tag: str


def _parse(image: str) -> _Image:
    from sregym.twin.node.images import ImageRef

    try:
        ref = ImageRef.parse(image)
    except Exception:  # an unparsable reference: a bare name
        return _Image(image, "")
    return _Image(ref.base, ref.tag)


def family_of(image: str, spec: Any = None) -> str:
    """The base userland of `image` (a reference) whose catalogue entry is `spec` (or None)."""
    ref = _parse(image)
    extras = getattr(spec, "extras", None) or {}
    if extras.get("family"):
        return str(extras["family"])
    if _ALPINE_TAG.search(ref.tag) or ref.repository.endswith(("/alpine", "/curl", "/stress")):
        return ALPINE
    if ref.repository.endswith("/busybox"):
        return BUSYBOX
    if ref.repository in _FAMILIES:
        return _FAMILIES[ref.repository]
    shell = getattr(spec, "shell", "dash") if spec is not None else "dash"
    if not shell:
        return DISTROLESS
    return ALPINE if shell == "ash" else DEBIAN


def _additions(ref: _Image, spec: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in (_ADDITIONS.get(ref.repository, "") + " " + _SHELLS.get(ref.repository, "")).split():
        name = entry.rsplit("/", 1)[-1]
        out[name] = entry if entry.startswith("/") else f"/usr/local/bin/{entry}"
    if ref.repository == "docker.io/library/python" and _SLIM_TAG.search(ref.tag):
        for name in ("curl", "wget", "git"):
            out.pop(name, None)
    if ref.repository == "docker.io/library/postgres" and ref.tag[:2].isdigit():
        major = ref.tag.split(".")[0].split("-")[0]
        out.update({name: path.replace("/17/", f"/{major}/") for name, path in out.items()
                    if "/postgresql/17/" in path})
    for name in getattr(spec, "commands", None) or {}:
        base = name.rsplit("/", 1)[-1]
        if base not in out:
            own = _OWN_DIRS.get(ref.repository, "/usr/local/bin")
            out[base] = name if name.startswith("/") else f"{own}/{base}"
    if ref.repository == "docker.io/library/mongo":
        # 4.4 ships the legacy `mongo` shell, 5.0 both, 6.0 on only `mongosh`.
        major = int(ref.tag.split(".")[0]) if ref.tag[:1].isdigit() else 8
        out.pop("mongo", None)
        out.pop("mongosh", None)
        if major <= 5:
            out["mongo"] = "/usr/bin/mongo"
        if major >= 5:
            out["mongosh"] = "/usr/bin/mongosh"
    return out


def executables(image: str, spec: Any = None) -> dict[str, str]:
    """Every executable of `image` on the default PATH (plus the entrypoint scripts off it):
    name -> absolute path. An explicit `extras["binaries"]` list replaces the family's set."""
    ref = _parse(image)
    extras = getattr(spec, "extras", None) or {}
    explicit = extras.get("binaries")
    if explicit:
        if isinstance(explicit, dict):
            return {str(k): str(v) for k, v in explicit.items()}
        return {str(name).rsplit("/", 1)[-1]: (str(name) if str(name).startswith("/") else f"/usr/bin/{name}")
                for name in explicit}
    family = family_of(image, spec)
    out = dict(FAMILY_BINARIES.get(family, FAMILY_BINARIES[DEBIAN]))
    out.update(_additions(ref, spec))
    # An image built FROM a family with more packages (`apt-get install dnsutils`).
    for entry in extras.get("add_binaries") or ():
        entry = str(entry)
        out[entry.rsplit("/", 1)[-1]] = entry if entry.startswith("/") else f"/usr/bin/{entry}"
    return out


ON_PATH_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
                "/usr/lib/postgresql", "/usr/local/go/bin", "/go/bin")


def on_path(path: str) -> bool:
    """Whether a binary at `path` is found by name through the default PATH (an entrypoint
    script at `/docker-entrypoint.sh` is not: it runs only by its path)."""
    directory = path.rsplit("/", 1)[0]
    return any(directory == d or (d == "/usr/lib/postgresql" and directory.startswith(d + "/"))
               for d in ON_PATH_DIRS)
