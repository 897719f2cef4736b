// Package onnx reads ONNX models (https://onnx.ai, the IR of onnx 1.22.0's
// onnx-ml.proto) into a Plumb-side view: the opset imports, the graph's
// inputs and outputs with their element types and shapes (symbolic
// dimensions kept by name), the initializers as *tensor.Tensor and the
// nodes with typed attributes. It is the reading half of ONNX import;
// running a graph is built on top of it (see Supported for the op types
// the importer runs so far).
//
// Reading is bounded, since a model file is untrusted input: Decode
// refuses a model larger than Options.MaxModelBytes, checks every
// tensor's declared dims times its element size against the bytes actually
// present before it builds the tensor, and reads external data (the
// data_location EXTERNAL convention of the ONNX IR, docs/ExternalData.md
// in the onnx repository) only from regular files inside the model's
// directory, only the declared length, after checking that length
// against the file's size. Models over 2 GB, the protobuf limit, work
// through external data. No input makes Decode or Load panic.
//
// The protobuf types are generated (onnx/internal/pb) and decoded with
// google.golang.org/protobuf, the Go reference implementation of the
// protobuf wire format.
package onnx
