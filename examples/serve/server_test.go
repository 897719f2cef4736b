package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// fakeDigits answers each image with class = the index of its brightest
// pixel mod 10, so a test can tell which image an answer belongs to.
// gate, when not nil, holds every call until it is closed; panics makes
// every call panic.
type fakeDigits struct {
	gate   chan struct{}
	delay  time.Duration
	panics atomic.Bool
	seen   atomic.Int64
	last   atomic.Pointer[[]float32]
}

func (f *fakeDigits) Predict(ctx context.Context, batch [][]float32) ([]Prediction, error) {
	if f.gate != nil {
		<-f.gate
	}
	time.Sleep(f.delay)
	if f.panics.Load() {
		panic("model exploded")
	}
	f.seen.Add(int64(len(batch)))
	out := make([]Prediction, len(batch))
	for i, img := range batch {
		best := 0
		for j, v := range img {
			if v > img[best] {
				best = j
			}
		}
		probs := make([]float32, 10)
		probs[best%10] = 1
		out[i] = Prediction{Class: best % 10, Probs: probs}
		f.last.Store(&img)
	}
	return out, nil
}

// fakeReviews answers each review with class = its length mod 2.
type fakeReviews struct{}

func (fakeReviews) Predict(ctx context.Context, batch [][]int64) ([]Prediction, error) {
	out := make([]Prediction, len(batch))
	for i, ids := range batch {
		c := len(ids) % 2
		p := []float32{0.25, 0.25}
		p[c] = 0.75
		out[i] = Prediction{Class: c, Probs: p}
	}
	return out, nil
}

// fakeEncode maps each space-separated word to its length.
func fakeEncode(text string) ([]int64, error) {
	var ids []int64
	for _, w := range strings.Fields(text) {
		ids = append(ids, int64(len(w)))
	}
	if len(ids) == 0 {
		return nil, errEmptyReview
	}
	return ids, nil
}

// testServer builds a Server over the fakes; it closes the batchers at
// the test's end.
func testServer(t *testing.T, digits Predictor[[]float32, Prediction], scfg ServerConfig, bcfg BatchConfig) *Server {
	t.Helper()
	db, err := NewBatcher(digits, bcfg)
	require.NoError(t, err)
	sb, err := NewBatcher[[]int64, Prediction](fakeReviews{}, bcfg)
	require.NoError(t, err)
	s, err := NewServer(scfg,
		&DigitModel{Info: ModelInfo{Name: "fake-digits", Weights: "fresh", Fresh: true, Seed: 7}, Batcher: db},
		&SentimentModel{Info: ModelInfo{Name: "fake-sentiment", Weights: "x.safetensors"}, Encode: fakeEncode, Batcher: sb, MaxWords: 6})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Drain(ctx))
	})
	return s
}

var quickBatch = BatchConfig{MaxBatch: 8, MaxWait: time.Millisecond, Queue: 64, Workers: 1}

func pixelsJSON(hot int, n int) string {
	px := make([]float32, n)
	if hot < n {
		px[hot] = 1
	}
	b, _ := json.Marshal(DigitRequest{Pixels: px})
	return string(b)
}

// pngB64 encodes a w×h gray image with one white pixel at hot.
func pngB64(t *testing.T, w, h, hot int) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	img.Pix[hot] = 255
	img.SetGray(0, 0, color.Gray{Y: 51}) // 0.2
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// do sends one request to the handler and decodes the JSON answer.
func do(t *testing.T, h http.Handler, method, path, body string) (int, http.Header, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "every answer is JSON: %q", rec.Body.String())
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return rec.Code, rec.Header(), out
}

func TestServerAnswers(t *testing.T) {
	s := testServer(t, &fakeDigits{}, DefaultServerConfig(), quickBatch)
	for _, tc := range []struct {
		name, path, body string
		want             map[string]any
	}{
		{"pixels", "/v1/digit", pixelsJSON(3*28+5, Pixels), map[string]any{"class": float64((3*28 + 5) % 10), "model": "fake-digits"}},
		{"png", "/v1/digit", `{"png": "` + pngB64(t, 28, 28, 28*28-1) + `"}`, map[string]any{"class": float64((28*28 - 1) % 10)}},
		{"review", "/v1/sentiment", `{"text": "good fun film"}`, map[string]any{"label": "negative", "words": float64(3), "probability": 0.75, "model": "fake-sentiment"}},
		{"even review", "/v1/sentiment", `{"text": "good film"}`, map[string]any{"label": "positive", "words": float64(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, out := do(t, s, http.MethodPost, tc.path, tc.body)
			require.Equal(t, http.StatusOK, code, out)
			for k, v := range tc.want {
				assert.Equal(t, v, out[k], k)
			}
		})
	}
	code, _, out := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(0, Pixels))
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, out["warning"], "untrained weights (fresh, seed 7)", "a fresh model says so")
	code, _, out = do(t, s, http.MethodPost, "/v1/sentiment", `{"text":"a"}`)
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, out, "warning", "a loaded model carries no warning")
}

func TestServerDecodesPNGToScaledGray(t *testing.T) {
	f := &fakeDigits{}
	s := testServer(t, f, DefaultServerConfig(), quickBatch)
	code, _, out := do(t, s, http.MethodPost, "/v1/digit", `{"png": "`+pngB64(t, 28, 28, 100)+`"}`)
	require.Equal(t, http.StatusOK, code, out)
	img := *f.last.Load()
	require.Len(t, img, Pixels)
	assert.InDelta(t, 0.2, img[0], 1e-6)
	assert.Equal(t, float32(1), img[100])
	assert.Equal(t, float32(0), img[101])
}

// TestGrayPixels checks the gray fast path against color.GrayModel on
// the same picture as a gray, an RGBA and a paletted image, each with a
// bounds origin away from (0, 0).
func TestGrayPixels(t *testing.T) {
	r := image.Rect(3, 5, 31, 33)
	gray := image.NewGray(r)
	rgba := image.NewRGBA(r)
	pal := image.NewPaletted(r, color.Palette{color.Black, color.White, color.Gray{Y: 128}})
	rng := tensor.NewRNG(9)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			v := []uint8{0, 255, 128}[rng.IntN(3)]
			gray.SetGray(x, y, color.Gray{Y: v})
			rgba.Set(x, y, color.Gray{Y: v})
			pal.Set(x, y, color.Gray{Y: v})
		}
	}
	want := make([]float32, 0, Pixels)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			want = append(want, float32(color.GrayModel.Convert(rgba.At(x, y)).(color.Gray).Y)/255)
		}
	}
	for name, img := range map[string]image.Image{"gray": gray, "rgba": rgba, "paletted": pal} {
		assert.Equal(t, want, grayPixels(img), name)
	}
}

func TestServerErrors(t *testing.T) {
	cfg := DefaultServerConfig()
	cfg.MaxBody = 16 << 10
	s := testServer(t, &fakeDigits{}, cfg, quickBatch)
	bad := make([]string, Pixels)
	for i := range bad {
		bad[i] = "0"
	}
	bad[9] = "1.5"
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"wrong length", "POST", "/v1/digit", pixelsJSON(0, 783), http.StatusBadRequest, `"pixels" has 783 values, want 784`},
		{"too many pixels", "POST", "/v1/digit", pixelsJSON(0, 785), http.StatusBadRequest, "785 values"},
		{"pixel out of range", "POST", "/v1/digit", `{"pixels": [` + strings.Join(bad, ",") + `]}`, http.StatusBadRequest, `"pixels"[9] = 1.5`},
		{"bad JSON", "POST", "/v1/digit", `{"pixels": [0, 1`, http.StatusBadRequest, "bad JSON"},
		{"not an object", "POST", "/v1/digit", `[1, 2]`, http.StatusBadRequest, "bad JSON"},
		{"wrong type", "POST", "/v1/digit", `{"pixels": "zero"}`, http.StatusBadRequest, "bad JSON"},
		{"unknown field", "POST", "/v1/digit", `{"pixel": []}`, http.StatusBadRequest, `unknown field "pixel"`},
		{"trailing data", "POST", "/v1/sentiment", `{"text": "ok"} {"text": "again"}`, http.StatusBadRequest, "data after the JSON object"},
		{"trailing garbage", "POST", "/v1/sentiment", `{"text": "ok"} x`, http.StatusBadRequest, "bad JSON"},
		{"empty body", "POST", "/v1/digit", ``, http.StatusBadRequest, "empty body"},
		{"no input", "POST", "/v1/digit", `{}`, http.StatusBadRequest, `want "pixels"`},
		{"both inputs", "POST", "/v1/digit", `{"pixels": [0], "png": "AA=="}`, http.StatusBadRequest, "not both"},
		{"bad base64", "POST", "/v1/digit", `{"png": "***"}`, http.StatusBadRequest, "not standard base64"},
		{"not a PNG", "POST", "/v1/digit", `{"png": "` + base64.StdEncoding.EncodeToString([]byte("this is not a PNG file at all")) + `"}`, http.StatusBadRequest, `"png": png: invalid format`},
		{"PNG of the wrong size", "POST", "/v1/digit", `{"png": "` + pngB64(t, 30, 20, 0) + `"}`, http.StatusBadRequest, "is 30×20, want 28×28"},
		{"huge PNG header", "POST", "/v1/digit", `{"png": "` + hugePNGHeader() + `"}`, http.StatusBadRequest, "want 28×28"},
		{"empty review", "POST", "/v1/sentiment", `{"text": ""}`, http.StatusBadRequest, `"text": the review has no words`},
		{"blank review", "POST", "/v1/sentiment", `{"text": " \n\t "}`, http.StatusBadRequest, "no words"},
		{"review of the wrong type", "POST", "/v1/sentiment", `{"text": 5}`, http.StatusBadRequest, "bad JSON"},
		{"review too long", "POST", "/v1/sentiment", `{"text": "a b c d e f g"}`, http.StatusBadRequest, `"text" has 7 words, more than this server's limit of 6`},
		{"too large", "POST", "/v1/digit", `{"pixels": [` + strings.Repeat("0,", 10000) + `0]}`, http.StatusRequestEntityTooLarge, "over the limit of 16384 bytes"},
		{"GET a model", "GET", "/v1/digit", ``, http.StatusMethodNotAllowed, "use POST"},
		{"unknown path", "POST", "/v2/digit", `{}`, http.StatusNotFound, "no endpoint /v2/digit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, out := do(t, s, tc.method, tc.path, tc.body)
			assert.Equal(t, tc.code, code, out)
			assert.Equal(t, float64(tc.code), out["status"])
			assert.Contains(t, out["error"], tc.want)
			if code == http.StatusMethodNotAllowed {
				assert.Equal(t, "POST", hdr.Get("Allow"))
			}
		})
	}
}

// hugePNGHeader is the base64 of a PNG signature and an IHDR chunk that
// claims 100000×100000 pixels: refused on the header, nothing decoded.
func hugePNGHeader() string {
	var b bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	png.Encode(&b, img)
	raw := b.Bytes()
	// IHDR's width and height sit at bytes 16..23, its CRC (of type
	// and data, bytes 12..28) at 29..32.
	for _, off := range []int{16, 20} {
		binary.BigEndian.PutUint32(raw[off:], 100000)
	}
	binary.BigEndian.PutUint32(raw[29:], crc32.ChecksumIEEE(raw[12:29]))
	return base64.StdEncoding.EncodeToString(raw)
}

func TestServerOnlyOneModel(t *testing.T) {
	db, err := NewBatcher[[]float32, Prediction](&fakeDigits{}, quickBatch)
	require.NoError(t, err)
	s, err := NewServer(DefaultServerConfig(), &DigitModel{Info: ModelInfo{Name: "d"}, Batcher: db}, nil)
	require.NoError(t, err)
	defer s.Drain(context.Background())
	code, _, out := do(t, s, http.MethodPost, "/v1/sentiment", `{"text": "x"}`)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, out["error"], "no sentiment model")

	for _, tc := range []struct {
		name string
		cfg  ServerConfig
		d    *DigitModel
		s    *SentimentModel
		want string
	}{
		{"no model", DefaultServerConfig(), nil, nil, "no model"},
		{"no batcher", DefaultServerConfig(), &DigitModel{}, nil, "no batcher"},
		{"no encoder", DefaultServerConfig(), nil, &SentimentModel{}, "encoder"},
		{"no body", ServerConfig{Timeout: time.Second}, &DigitModel{Batcher: db}, nil, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewServer(tc.cfg, tc.d, tc.s)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestServerQueueFull(t *testing.T) {
	f := &fakeDigits{gate: make(chan struct{})}
	cfg := DefaultServerConfig()
	cfg.RetryAfter = 3 * time.Second
	s := testServer(t, f, cfg, BatchConfig{MaxBatch: 1, Queue: 2, Workers: 1})
	var wg sync.WaitGroup
	codes := make(chan int, 3)
	for i := range 3 { // one running, two queued
		wg.Go(func() {
			code, _, _ := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(i, Pixels))
			codes <- code
		})
	}
	require.Eventually(t, func() bool { return len(s.digit.Batcher.queue) == 2 }, 5*time.Second, time.Millisecond)
	code, hdr, out := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(0, Pixels))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "3", hdr.Get("Retry-After"))
	assert.Contains(t, out["error"], "queue is full")
	close(f.gate)
	wg.Wait()
	close(codes)
	for c := range codes {
		assert.Equal(t, http.StatusOK, c, "the accepted requests are answered")
	}
}

func TestServerDeadline(t *testing.T) {
	f := &fakeDigits{gate: make(chan struct{})}
	cfg := DefaultServerConfig()
	cfg.Timeout = 50 * time.Millisecond
	s := testServer(t, f, cfg, BatchConfig{MaxBatch: 1, Queue: 4, Workers: 1})
	defer close(f.gate)
	start := time.Now()
	code, _, out := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(0, Pixels))
	assert.Equal(t, http.StatusGatewayTimeout, code)
	assert.Contains(t, out["error"], "within the request deadline of 50ms")
	assert.Less(t, time.Since(start), 3*time.Second)
}

func TestServerClientCancels(t *testing.T) {
	f := &fakeDigits{gate: make(chan struct{})}
	s := testServer(t, f, DefaultServerConfig(), BatchConfig{MaxBatch: 1, Queue: 4, Workers: 1})
	defer close(f.gate)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/digit", strings.NewReader(pixelsJSON(0, Pixels))))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "request cancelled")
}

func TestServerPredictorPanicIs500(t *testing.T) {
	f := &fakeDigits{}
	f.panics.Store(true)
	s := testServer(t, f, DefaultServerConfig(), quickBatch)
	code, _, out := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(0, Pixels))
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, out["error"], "model failed: batcher: predictor panicked")
	f.panics.Store(false)
	code, _, _ = do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(0, Pixels))
	assert.Equal(t, http.StatusOK, code, "the server keeps serving")
}

func TestServerHandlerPanicIs500(t *testing.T) {
	s := testServer(t, &fakeDigits{}, DefaultServerConfig(), quickBatch)
	s.mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("handler bug") })
	code, _, out := do(t, s, http.MethodGet, "/panic", "")
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Contains(t, out["error"], "internal error: handler bug")
	assert.Equal(t, int64(1), s.Responses()[http.StatusInternalServerError])
}

func TestServerHealthAndReadiness(t *testing.T) {
	s := testServer(t, &fakeDigits{}, DefaultServerConfig(), quickBatch)
	code, _, _ := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(0, Pixels))
	require.Equal(t, http.StatusOK, code)
	code, _, out := do(t, s, http.MethodGet, "/healthz", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", out["status"])
	assert.Equal(t, true, out["ready"])
	models := out["models"].([]any)
	require.Len(t, models, 2)
	d := models[0].(map[string]any)
	assert.Equal(t, "fake-digits", d["name"])
	assert.Equal(t, true, d["fresh"])
	assert.Contains(t, d["warning"], "for load tests only")
	assert.Equal(t, float64(8), d["max_batch"])
	assert.Equal(t, float64(1), d["requests"])
	assert.Equal(t, float64(1), d["mean_batch"])
	assert.Equal(t, false, models[1].(map[string]any)["fresh"])

	code, _, _ = do(t, s, http.MethodGet, "/readyz", "")
	assert.Equal(t, http.StatusOK, code)
	s.BeginDrain()
	code, hdr, out := do(t, s, http.MethodGet, "/readyz", "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, out["error"], "draining")
	assert.NotEmpty(t, hdr.Get("Retry-After"))
	code, _, out = do(t, s, http.MethodGet, "/healthz", "")
	assert.Equal(t, http.StatusOK, code, "alive while draining")
	assert.Equal(t, false, out["ready"])
}

// TestShutdownDuringLoadLosesNoAcceptedRequest runs the server on
// loopback under load from 32 clients, shuts it down in the middle, and
// checks that every request the server accepted was answered 200 or
// refused 503, and that the clients saw exactly those answers: the only
// other outcome is a connection the server never accepted.
func TestShutdownDuringLoadLosesNoAcceptedRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drain time.Duration
		delay time.Duration
	}{
		{"drained in time", 5 * time.Second, time.Millisecond},
		{"drain deadline refuses the queue", 20 * time.Millisecond, 15 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDigits{delay: tc.delay}
			s := testServer(t, f, DefaultServerConfig(), BatchConfig{MaxBatch: 4, MaxWait: time.Millisecond, Queue: 256, Workers: 1})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			served := make(chan error, 1)
			go func() { served <- serveUntil(ctx, ln, s, tc.drain, io.Discard) }()

			url := "http://" + ln.Addr().String() + "/v1/digit"
			body := []byte(pixelsJSON(1, Pixels))
			client := loadClient(32, 10*time.Second)
			var mu sync.Mutex
			got := map[int]int{}
			var refusedConn atomic.Int64
			var wg sync.WaitGroup
			var ok atomic.Int64
			for range 32 {
				wg.Go(func() {
					for fails := 0; fails < 3; {
						code, err := post(client, url, body)
						if err != nil {
							refusedConn.Add(1)
							fails++
							continue
						}
						if code == http.StatusOK {
							ok.Add(1)
						}
						mu.Lock()
						got[code]++
						mu.Unlock()
					}
				})
			}
			require.Eventually(t, func() bool { return ok.Load() >= 50 }, 10*time.Second, time.Millisecond, "load is flowing")
			stop()
			err = <-served
			if tc.drain >= time.Second {
				require.NoError(t, err)
			}
			wg.Wait()

			server := s.Responses()
			var total int64
			for code, n := range server {
				assert.Contains(t, []int{http.StatusOK, http.StatusServiceUnavailable}, code, "status %d: %d answers", code, n)
				total += n
			}
			var clientTotal int
			for code, n := range got {
				assert.Equal(t, server[code], int64(n), "status %d: the clients got what the server sent", code)
				clientTotal += n
			}
			assert.Equal(t, total, int64(clientTotal), "every accepted request was answered")
			assert.Equal(t, f.seen.Load(), int64(got[http.StatusOK]), "every 200 ran once")
			assert.Positive(t, got[http.StatusOK])
			t.Logf("answers %v, refused connections %d", got, refusedConn.Load())
			_, err = post(client, url, body)
			assert.Error(t, err, "after shutdown nothing is accepted")
			var ne net.Error
			if errors.As(err, &ne) {
				assert.False(t, ne.Timeout(), "refused at once")
			}
		})
	}
}
