// Package imagefolder reads labelled image folders, <root>/<class>/<file>
// with JPEG or PNG files, from a directory or straight from a tar, tar.gz
// or zip archive (the CIFAR-10 JPEG tree is one). Load gives a
// data.Dataset with "image", float32 [N, 3, H, W] in [0, 1], and "label",
// int64 [N], and the class names, sorted, that the labels index. Image
// headers are checked before decoding, so a file that declares a huge
// image is refused without allocating it.
package imagefolder
