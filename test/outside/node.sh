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
