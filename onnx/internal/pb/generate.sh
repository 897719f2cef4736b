#!/bin/sh
# generate.sh writes onnx-ml.pb.go from onnx-ml.proto with protoc and
# protoc-gen-go. `go generate ./onnx/...` runs it from onnx/internal/pb.
# The committed onnx-ml.pb.go was made with the versions below; any other
# protoc or protoc-gen-go would write a different header, so without
# exactly these (CI's go generate ./... check, a laptop) the script keeps
# the committed file and says why, as ops/cuda/kernels/generate.sh does
# for nvcc.
set -eu
cd "$(dirname "$0")"
want_protoc="libprotoc 3.21.12"
want_gen="protoc-gen-go v1.36.12" # google.golang.org/protobuf's version in go.mod
PATH="$PATH:$(go env GOPATH)/bin"
if ! command -v protoc >/dev/null 2>&1 || ! command -v protoc-gen-go >/dev/null 2>&1; then
	echo "onnx/internal/pb/generate.sh: no protoc or protoc-gen-go; keeping the committed onnx-ml.pb.go" >&2
	exit 0
fi
if [ "$(protoc --version)" != "$want_protoc" ] || [ "$(protoc-gen-go --version)" != "$want_gen" ]; then
	echo "onnx/internal/pb/generate.sh: need $want_protoc and $want_gen, have $(protoc --version) and $(protoc-gen-go --version); keeping the committed onnx-ml.pb.go" >&2
	exit 0
fi
protoc --go_out=. --go_opt=paths=source_relative \
	--go_opt=Monnx-ml.proto=github.com/plumbml/plumb/onnx/internal/pb \
	onnx-ml.proto
