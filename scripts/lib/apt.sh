# Sourced by the setup scripts: `apt_install TOOL PACKAGE` installs Debian's PACKAGE
# (needing root or password-less sudo, and Debian's package mirrors) without starting
# its service: a policy-rc.d refusal is in place for the install when none exists, since
# the tests start their own instances. Dies (through the caller's `die`) with the reason
# when it cannot.
apt_install() {
    local tool="$1" package="$2"
    local as_root=()
    if [ "$(id -u)" != 0 ]; then
        sudo -n true 2>/dev/null || die "$tool is not installed and installing it needs root: run 'sudo apt-get install $package'"
        as_root=(sudo -n)
    fi
    command -v apt-get >/dev/null || die "$tool is not installed and there is no apt-get here: install it yourself"
    local policy=/usr/sbin/policy-rc.d own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
        "${as_root[@]}" chmod 755 "$policy"
        own_policy=1
    fi
    local ok=1
    "${as_root[@]}" apt-get update -qq >&2 || ok=0
    if [ "$ok" = 1 ]; then
        DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$package" >&2 || ok=0
    fi
    [ "$own_policy" = 1 ] && "${as_root[@]}" rm -f "$policy"
    [ "$ok" = 1 ] || die "apt-get could not install $package (no network to the Debian mirrors?)"
}
