// Package pb holds the Go types of the ONNX protobuf messages, generated
// by protoc-gen-go from the official onnx-ml.proto (onnx 1.22.0; see the
// comment at the top of onnx-ml.proto). They are generated rather than
// taken from a third-party module so that the schema is exactly the
// published one and its version is pinned here; decoding goes through
// google.golang.org/protobuf, the reference implementation of the wire
// format, instead of a hand-written decoder for a schema this size.
// onnx-ml.proto is a superset of onnx.proto (it adds the ML types), and
// the two are wire-compatible, so either kind of model decodes.
package pb

//go:generate sh generate.sh
