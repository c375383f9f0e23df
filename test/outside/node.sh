# Sourced by run.sh and conformance.sh: installs the pinned Node into
# $tools/node$node_major (skipped when already there at a good version) and
# puts it first on PATH. Needs $tools, $node_major, $node_min_minor and a
# die function from the caller.

ensure_node() {
	node_dir="$tools/node$node_major"
	node_bin="$node_dir/node_modules/.bin/node"
	if node_ok; then
		echo "node: cached $("$node_bin" --version)"
	else
		echo "node: installing node@$node_major into $node_dir"
		rm -rf "$node_dir"
		timeout 600 npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error "node@$node_major"
		node_ok || die "node@$node_major installed into $node_dir but $node_bin does not run as v$node_major.>=$node_min_minor"
		echo "node: installed $("$node_bin" --version)"
	fi
	export PATH="$node_dir/node_modules/.bin:$PATH"
}

node_ok() {
	[[ -x "$node_bin" ]] && "$node_bin" -e '
		const [maj, min] = process.versions.node.split(".").map(Number);
		process.exit(maj === Number(process.argv[1]) && min >= Number(process.argv[2]) ? 0 : 1);
	' "$node_major" "$node_min_minor"
}

# ensure_npm_tree PACKAGE VERSION LOCKDIR DEST NPMCMD installs the tree pinned
# by LOCKDIR/package.json + package-lock.json into DEST with `npm NPMCMD`
# (install or ci), skipped when DEST already holds PACKAGE@VERSION installed
# from that same lock.
ensure_npm_tree() {
	local pkg=$1 version=$2 lockdir=$3 dest=$4 npmcmd=$5
	local pkgjson="$dest/node_modules/$pkg/package.json" stamp="$dest/installed-from.package-lock.json"
	tree_ok() {
		[[ -f "$pkgjson" ]] && cmp -s "$lockdir/package-lock.json" "$stamp" &&
			[[ "$(node -p 'require(process.argv[1]).version' "$pkgjson")" == "$version" ]]
	}
	if tree_ok; then
		echo "$pkg: cached $version"
		return
	fi
	echo "$pkg: installing $version into $dest"
	rm -rf "$dest"
	mkdir -p "$dest"
	cp "$lockdir/package.json" "$lockdir/package-lock.json" "$dest/"
	timeout 600 npm "$npmcmd" --prefix "$dest" --no-audit --no-fund --loglevel=error
	cp "$lockdir/package-lock.json" "$stamp"
	tree_ok || die "install in $dest is not $pkg@$version"
	echo "$pkg: installed $version"
}
