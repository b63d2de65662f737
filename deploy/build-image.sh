#!/usr/bin/env bash
# Builds Herald's container image with buildah (or podman/docker build):
# a static binary, the host's CA bundle and an empty data directory in a
# temporary build context, then deploy/Containerfile over them.
#
#   deploy/build-image.sh [IMAGE]        (default herald:local)
#   HERALD_VERSION=v1.2.3 deploy/build-image.sh herald:v1.2.3
set -euo pipefail

image=${1:-herald:local}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

version=${HERALD_VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo devel)}
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$ctx/herald" ./cmd/herald)
cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
mkdir -m 0700 "$ctx/data"
cp "$repo/deploy/Containerfile" "$ctx/"

builder=${BUILDER:-$(command -v buildah || command -v podman || command -v docker || true)}
if [[ -z $builder ]]; then
	echo "no buildah, podman or docker: install one (Debian: apt-get install buildah)" >&2
	exit 1
fi
case $(basename "$builder") in
buildah) "$builder" bud --format docker -f "$ctx/Containerfile" -t "$image" "$ctx" ;;
*) "$builder" build -f "$ctx/Containerfile" -t "$image" "$ctx" ;;
esac
echo "built $image ($version)"
