package imagefolder

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // register the JPEG decoder
	_ "image/png"  // register the PNG decoder
	"io"
	"path"
	"slices"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/internal/readlimit"
	"github.com/plumbml/plumb/tensor"
)

// Load reads a labelled image folder: every <root>/<class>/<file>
// with a .jpg, .jpeg or .png name under src, which is a directory or a
// tar/tar.gz/zip archive (the CIFAR-10 JPEG tree cifar10-jpeg/train/<class>/NNNN.jpg,
// read straight from its .tar.gz). root is the slash-separated folder
// inside src ("" for src itself). Classes are the folder names sorted, so
// label i is classes[i]; for CIFAR-10 that order is the dataset's own label
// order (airplane ... truck). Examples come sorted by class and file name.
//
// Fields: "image", float32 [N, 3, H, W] with RGB values scaled to [0, 1]
// (grey images repeated over the channels), and "label", int64 [N]. Every
// image must have the first one's size. A member whose name leaves the
// archive ("../x.png") is an error. It reads within data.DefaultLimits
// (see LoadLimits): at most 4096×4096 pixels an image.
func Load(src, root string) (ds *data.Dataset, classes []string, err error) {
	return LoadLimits(src, root, data.Limits{})
}

// LoadLimits is Load within lim. Each image's header is read first, and
// before it is decoded the image is refused when it has more than
// lim.MaxImagePixels pixels, when its RGB pixels (3 bytes each) pass
// lim.MaxRatio times its file's size (after readlimit.RatioSlack: a
// small PNG that declares a huge plain image), or when the float32
// pixels of all images so far would pass lim.MaxTotalBytes. Files and
// archive members go through fileio's budgets (lim.MaxFileBytes a
// member, lim.MaxRecords members, lim.MaxRatio for a compressed archive).
func LoadLimits(src, root string, lim data.Limits) (ds *data.Dataset, classes []string, err error) {
	return LoadProgress(src, root, lim, nil)
}

// LoadProgress is LoadLimits reporting to p (nil: silently) the images
// and bytes it reads, so that a command can show the seconds a JPEG tree
// takes (data.NewProgress); it ends the phase with p.Done.
func LoadProgress(src, root string, lim data.Limits, p *data.Progress) (ds *data.Dataset, classes []string, err error) {
	defer p.Done()
	lim = lim.Resolve()
	root = strings.Trim(root, "/")
	prefix := root + "/"
	if root == "" {
		prefix = ""
	}
	type img struct {
		class, file string
		pix         []float32
	}
	var imgs []img
	h, w := -1, -1
	keep := func(name string) bool {
		rest, ok := strings.CutPrefix(name, prefix)
		ext := strings.ToLower(path.Ext(name))
		return ok && strings.Count(rest, "/") == 1 && (ext == ".jpg" || ext == ".jpeg" || ext == ".png")
	}
	err = fileio.WalkTree(src, lim, keep, func(name string, size int64, r io.Reader) error {
		total := func(ih, iw int) error {
			if n := int64(len(imgs)+1) * 3 * int64(ih) * int64(iw) * 4; n > lim.MaxTotalBytes {
				return fmt.Errorf("%d images of %dx%d hold %d bytes of float32 pixels, more than %d: %w", len(imgs)+1, iw, ih, n, lim.MaxTotalBytes, readlimit.ErrTooBig)
			}
			return nil
		}
		pix, ih, iw, err := decodeImageFrom(r, size, lim, h, w, total)
		if err != nil {
			return fmt.Errorf("imagefolder: %s: %s: %w", src, name, err)
		}
		h, w = ih, iw
		class, file, _ := strings.Cut(strings.TrimPrefix(name, prefix), "/")
		imgs = append(imgs, img{class, file, pix})
		p.Add(1, size)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(imgs) == 0 {
		return nil, nil, fmt.Errorf("imagefolder: no <class>/<image>.{jpg,jpeg,png} under %q in %s", root, src)
	}
	slices.SortFunc(imgs, func(a, b img) int {
		if c := strings.Compare(a.class, b.class); c != 0 {
			return c
		}
		return strings.Compare(a.file, b.file)
	})
	pix := make([]float32, 0, len(imgs)*3*h*w)
	labels := make([]int64, len(imgs))
	for i, im := range imgs {
		if len(classes) == 0 || classes[len(classes)-1] != im.class {
			classes = append(classes, im.class)
		}
		labels[i] = int64(len(classes) - 1)
		pix = append(pix, im.pix...)
	}
	ds, err = data.NewDataset(data.DenseField("image", tensor.MustFromSlice(pix, len(imgs), 3, h, w)), data.DenseField("label", tensor.MustFromSlice(labels, len(labels))))
	return ds, classes, err
}

// decodeImage decodes one JPEG or PNG into channel-first RGB floats
// [3*H*W] in [0, 1] within the default limits. With wantH >= 0 the image
// must be wantH x wantW.
func decodeImage(b []byte, wantH, wantW int) (pix []float32, h, w int, err error) {
	return decodeImageFrom(bytes.NewReader(b), int64(len(b)), data.DefaultLimits(), wantH, wantW, nil)
}

// decodeImageFrom is decodeImage of a file of size bytes read from r: it
// reads the header, checks it against lim (pixels, expansion over size)
// and check (when not nil), and only then decodes.
func decodeImageFrom(r io.Reader, size int64, lim data.Limits, wantH, wantW int, check func(h, w int) error) (pix []float32, h, w int, err error) {
	var head bytes.Buffer
	cfg, format, err := image.DecodeConfig(io.TeeReader(r, &head))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("not a JPEG or PNG image: %w", err)
	}
	h, w = cfg.Height, cfg.Width
	if h < 1 || w < 1 || int64(h)*int64(w) > lim.MaxImagePixels {
		return nil, 0, 0, fmt.Errorf("%s of %dx%d: want 1 to %d pixels: %w", format, w, h, lim.MaxImagePixels, readlimit.ErrTooBig)
	}
	if err := readlimit.CheckRatio(fmt.Sprintf("%s of %dx%d", format, w, h), 3*int64(h)*int64(w), size, lim.MaxRatio); err != nil {
		return nil, 0, 0, err
	}
	if wantH >= 0 && (h != wantH || w != wantW) {
		return nil, 0, 0, fmt.Errorf("%s of %dx%d, but the first image is %dx%d: all must have one size", format, w, h, wantW, wantH)
	}
	if check != nil {
		if err := check(h, w); err != nil {
			return nil, 0, 0, err
		}
	}
	im, _, err := image.Decode(io.MultiReader(&head, r))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("decoding %s: %w", format, err)
	}
	if bd := im.Bounds(); bd.Dx() != w || bd.Dy() != h {
		return nil, 0, 0, fmt.Errorf("%s decodes to %v, its header said %dx%d", format, bd, w, h)
	}
	pix = make([]float32, 3*h*w)
	plane := h * w
	min := im.Bounds().Min
	for y := range h {
		for x := range w {
			var r, g, bl uint8
			switch m := im.(type) {
			case *image.YCbCr:
				yi, ci := m.YOffset(min.X+x, min.Y+y), m.COffset(min.X+x, min.Y+y)
				r, g, bl = color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
			case *image.Gray:
				v := m.Pix[m.PixOffset(min.X+x, min.Y+y)]
				r, g, bl = v, v, v
			default:
				c := color.NRGBAModel.Convert(im.At(min.X+x, min.Y+y)).(color.NRGBA)
				r, g, bl = c.R, c.G, c.B
			}
			i := y*w + x
			pix[i], pix[plane+i], pix[2*plane+i] = float32(r)/255, float32(g)/255, float32(bl)/255
		}
	}
	return pix, h, w, nil
}
