package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/runlog"
)

// writeCIFARBin writes n random CIFAR-10 binary records to path.
func writeCIFARBin(t *testing.T, path string, n int, rng *rand.Rand) {
	var b bytes.Buffer
	for range n {
		b.WriteByte(byte(rng.IntN(10)))
		for range 3072 {
			b.WriteByte(byte(rng.IntN(256)))
		}
	}
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// writeCIFARJPEGTree writes a .tar.gz with cifar10-jpeg/{train,test}/<class>/NNNN.jpg,
// perClass images of two classes in each split.
func writeCIFARJPEGTree(t *testing.T, path string, perClass int, rng *rand.Rand) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, split := range []string{"train", "test"} {
		for _, class := range []string{"airplane", "automobile"} {
			for i := range perClass {
				img := image.NewRGBA(image.Rect(0, 0, 32, 32))
				for p := range 32 * 32 {
					img.Set(p%32, p/32, color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255})
				}
				var jb bytes.Buffer
				require.NoError(t, jpeg.Encode(&jb, img, nil))
				name := fmt.Sprintf("cifar10-jpeg/%s/%s/%04d.jpg", split, class, i)
				require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(jb.Len()), Typeflag: tar.TypeReg}))
				_, err := tw.Write(jb.Bytes())
				require.NoError(t, err)
			}
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

var testAccuracy = regexp.MustCompile(`accuracy [0-9]\.[0-9]{4}`)

// Train a small ResNet on generated binary batches (laid out as the shared
// data root), save it, and evaluate the checkpoint: eval must print the
// accuracy training printed, since the model carries its normalisation.
func TestTrainSaveEvalCIFAR(t *testing.T) {
	root := writeTinyCIFAR(t)
	ckpt := filepath.Join(t.TempDir(), "resnet.safetensors")
	best := filepath.Join(t.TempDir(), "best.safetensors")
	logDir := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	args := []string{"--data", root, "--depth", "8", "--width", "2", "--batch", "8"}
	require.NoError(t, run(append([]string{"train", "cifar10", "--epochs", "2", "--limit", "20", "--augment", "--save", ckpt, "--best", best,
		"--log", logDir, "--log-every", "1"}, args...), &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "training resnet32 on 20 CIFAR-10 images (bin), testing on 10")
	require.Contains(t, out.String(), "epoch 2/2: train loss")
	require.Contains(t, errOut.String(), " images/s", "progress goes to stderr, its rate in the chapter's unit")
	require.Contains(t, out.String(), "images/s", "the epoch line counts images")
	accs := testAccuracy.FindAllString(out.String(), -1)
	require.Len(t, accs, 2)
	require.FileExists(t, best)
	logged, err := runlog.Read(logDir)
	require.NoError(t, err)
	require.Equal(t, "cifar10-resnet32-depth8-width2-limit20-epochs2-batch8-augment", logged.Meta.Model)
	require.Len(t, logged.Epochs, 2)
	require.Len(t, logged.Steps, 6, "3 steps an epoch, each logged")
	require.Equal(t, accs[1], fmt.Sprintf("accuracy %.4f", logged.Epochs[1].Metrics["accuracy"]))

	// eval rebuilds the depth and width the checkpoint records, and its
	// normalisation, so it measures what training measured.
	out.Reset()
	require.NoError(t, run([]string{"eval", "cifar10", "--load", ckpt, "--data", root, "--batch", "8"}, &out, &errOut))
	require.Contains(t, out.String(), "on 10 test images (resnet32, bin): "+accs[1])
	meta, err := checkpoint.Meta(best)
	require.NoError(t, err)
	require.Equal(t, "cifar10", meta["plumb/chapter"], "the --best file knows its model too")
}

func TestTrainCIFARFromTheJPEGTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	archive := filepath.Join(t.TempDir(), "cifar.tar.gz")
	writeCIFARJPEGTree(t, archive, 3, rng)
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "cifar10", "--format", "jpeg", "--data", archive, "--model", "vgg", "--depth", "11", "--width", "1",
		"--batch", "4", "--test-limit", "5"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "training vgg on 6 CIFAR-10 images (jpeg), testing on 5")
	require.Len(t, testAccuracy.FindAllString(out.String(), -1), 1)
}

func TestCIFARUsageErrors(t *testing.T) {
	t.Setenv("PLUMB_DATA", "")
	empty := t.TempDir()
	var out, errOut bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "cifar10"}, "no data: pass --data DIR"},
		{[]string{"train", "cifar10", "--data", empty, "--format", "png"}, `--format "png": want bin or jpeg`},
		{[]string{"train", "cifar10", "--data", empty}, "no data_batch_*.bin or data_batch_*.bin.gz"},
		{[]string{"train", "cifar10", "--data", empty, "--format", "jpeg"}, "no JPEG tree in"},
		{[]string{"train", "cifar10", "--device", "cuda"}, "this plumb was built without CUDA"},
		{[]string{"train", "cifar10", "--data", empty, "--model", "alexnet"}, `unknown model "alexnet"`},
		{[]string{"train", "cifar10", "--data", empty, "--model", "vgg", "--depth", "12"}, "vgg depth 12"},
		{[]string{"train", "cifar10", "--data", empty, "--model", "resnet32", "--depth", "33"}, "resnet depth 33"},
		{[]string{"eval", "cifar10"}, "--load FILE"},
		{[]string{"train", "cifar10", "--log-every", "0"}, "--log-every 0"},
	} {
		err := run(c.args, &out, &errOut)
		require.Error(t, err, c.args)
		require.Contains(t, err.Error(), c.want, c.args)
	}
}
