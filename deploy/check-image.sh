#!/usr/bin/env bash
# CI's check of the container image: builds it with buildah, then checks
# what can be checked where containers cannot run (CI's sandbox): the
# image's user, entrypoint, command, health check and volume, and the
# binary inside it run from the image's own filesystem as the image's user
# (serve on loopback, then `herald healthcheck` as the image's health check
# runs it). Run as root.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=herald:ci-check
"$repo/deploy/build-image.sh" "$image"

cfg=$(buildah inspect --format '{{.Docker.Config.User}}|{{.Docker.Config.Entrypoint}}|{{.Docker.Config.Cmd}}|{{.Docker.Config.Healthcheck.Test}}|{{.Docker.Config.Volumes}}' "$image")
want='65532:65532|[/herald]|[serve]|[CMD /herald healthcheck]|map[/data:{}]'
if [[ $cfg != "$want" ]]; then
	echo "image config: got $cfg, want $want" >&2
	exit 1
fi
echo "image config: user, entrypoint, command, health check and volume as expected"

ctr=$(buildah from "$image")
data=$(mktemp -d)
cleanup() {
	[[ -n ${pid:-} ]] && kill "$pid" 2>/dev/null || true
	buildah umount "$ctr" >/dev/null 2>&1 || true
	buildah rm "$ctr" >/dev/null 2>&1 || true
	buildah rmi "$image" >/dev/null 2>&1 || true
	rm -rf "$data"
}
trap cleanup EXIT
root=$(buildah mount "$ctr")
owner=$(stat -c %u:%g "$root/data")
[[ $owner == 65532:65532 ]] || { echo "/data is owned by $owner, want 65532:65532" >&2; exit 1; }
chown 65532:65532 "$data"

as_image_user=(setpriv --reuid 65532 --regid 65532 --clear-groups)
port=$((20000 + RANDOM % 20000))
env -i HERALD_DATA_DIR="$data" HERALD_ADDR=127.0.0.1:$port HERALD_ADMIN_ADDR=127.0.0.1:$((port + 1)) \
	"${as_image_user[@]}" "$root/herald" serve >"$data/out" 2>&1 &
pid=$!
for _ in $(seq 60); do
	if env -i HERALD_ADDR=127.0.0.1:$port "${as_image_user[@]}" "$root/herald" healthcheck >/dev/null 2>&1; then
		echo "the image's binary serves as uid 65532 and its health check passes"
		exit 0
	fi
	sleep 0.5
done
echo "the image's binary did not become ready:" >&2
cat "$data/out" >&2
exit 1
