#!/usr/bin/env bash
# Build the Debian root the ansible_host tests configure (reached with community.general.chroot)
# and cache it as a tarball: `build_test_root.sh TARBALL`. Does nothing when TARBALL exists.
# Needs root, debootstrap and the Debian mirror apt already uses. Nothing is mounted in the root
# (never the host's /proc): the roles must work without it.
set -euo pipefail
out="${1:?usage: build_test_root.sh TARBALL}"
[ -s "$out" ] && exit 0
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' "$f")
  [ -n "$mirror" ] && break
done
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
mirror="${mirror:-http://deb.debian.org/debian}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
# python3 runs Ansible's modules; python3-apt serves the apt/package modules.
timeout 900 debootstrap --variant=minbase --include=python3,python3-apt bookworm "$tmp/root" "$mirror" >"$tmp/log" 2>&1 \
  || { tail -20 "$tmp/log" >&2; exit 1; }
rm -f "$tmp"/root/var/cache/apt/archives/*.deb
mkdir -p "$(dirname "$out")"
tar -C "$tmp/root" -czf "$out.tmp" .
mv "$out.tmp" "$out"
echo "test root: $out ($(du -h "$out" | cut -f1), built in $(( $(date +%s) - start )) s from $mirror)"
