#!/bin/bash
# Installs what building and testing need (Debian/Ubuntu): the packages listed in
# tests/packages.txt. As root it runs apt-get; otherwise it prints the exact command to run.
here=$(cd "$(dirname "$0")" && pwd)
pkgs=$(sed -e 's/#.*//' "$here/packages.txt" | tr -s ' \n' ' ')
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null 2>&1 || true
	apt-get install -y -qq $missing >/dev/null || { echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
else
	echo "deps: missing packages:$missing" >&2
	echo "deps: run: sudo apt-get install -y$missing" >&2
	exit 1
fi
