# Sourced by test/browser/run.sh and ui.sh: finds Chromium ($CHROMIUM, else
# Debian's /usr/bin/chromium), installing Debian's package with apt-get when
# it is missing, and exports CHROMIUM. Needs a die function from the caller.

ensure_chromium() {
	chromium="${CHROMIUM:-/usr/bin/chromium}"
	if [[ ! -x "$chromium" ]]; then
		echo "installing Debian's chromium (apt-get)"
		sudo=""
		[[ "$(id -u)" == 0 ]] || sudo="sudo"
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
	fi
	[[ -x "$chromium" ]] || die "no Chromium at $chromium"
	"$chromium" --version 2>/dev/null || true
	export CHROMIUM="$chromium"
}
