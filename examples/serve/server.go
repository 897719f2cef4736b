package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plumbml/plumb/data/imdb"
)

// ServerConfig bounds the HTTP side of the server.
type ServerConfig struct {
	// MaxBody is the largest request body read, in bytes; a larger one is
	// answered 413.
	MaxBody int64
	// Timeout is each request's deadline, from the moment its handler
	// starts until its prediction is back; past it the answer is 504.
	Timeout time.Duration
	// RetryAfter is the Retry-After of a 503 (queue full, shutting down).
	RetryAfter time.Duration
}

// DefaultServerConfig is what the command line starts from: a body of
// 64 KiB holds 784 pixels as JSON text (about 10 KB at full precision), a
// 28×28 PNG in base64, or a long review.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{MaxBody: 64 << 10, Timeout: 5 * time.Second, RetryAfter: time.Second}
}

// ModelInfo describes a served model for the responses and /healthz.
type ModelInfo struct {
	Name    string `json:"name"`    // e.g. "mnist-cnn"
	Weights string `json:"weights"` // the checkpoint, or "fresh"
	// Fresh marks a model initialised from a seed rather than loaded:
	// its answers mean nothing, it exists for load tests.
	Fresh bool   `json:"fresh"`
	Seed  uint64 `json:"seed,omitempty"`
}

func (m ModelInfo) warning() string {
	if !m.Fresh {
		return ""
	}
	return fmt.Sprintf("untrained weights (fresh, seed %d): for load tests only, the predictions mean nothing", m.Seed)
}

// DigitModel is the classifier the server runs: a batcher in front of a
// Predictor of images (Pixels values each).
type DigitModel struct {
	Info    ModelInfo
	Batcher *Batcher[[]float32, Prediction]
}

// SentimentModel is the sentiment classifier: Encode maps a review's
// text to ids (SentimentPredictor.Encode), Batcher runs batches of them.
// A review of more than MaxWords words (0: no limit beyond the body
// size) is refused with 400, which bounds a batch's memory at MaxBatch
// times MaxWords words.
type SentimentModel struct {
	Info     ModelInfo
	Encode   func(text string) ([]int64, error)
	Batcher  *Batcher[[]int64, Prediction]
	MaxWords int
}

// Server is the HTTP front of the batchers: JSON in and out on
//
//	POST /v1/digit      {"pixels": [784 numbers in [0, 1]]} or {"png": "<base64 28×28 PNG>"}
//	POST /v1/sentiment  {"text": "a review"}
//	GET  /healthz       liveness, the models and their batching figures
//	GET  /readyz        200 while serving, 503 once draining
//
// Every error is a JSON object {"error": ..., "status": ...} with a 4xx
// status for the client's mistakes (400 bad input, 404, 405, 413 too
// large) and 5xx for the server's state (503 queue full or shutting down,
// with Retry-After; 504 deadline passed; 500 model failure or a panic,
// which never escapes a handler).
type Server struct {
	cfg       ServerConfig
	digit     *DigitModel
	sentiment *SentimentModel
	mux       *http.ServeMux

	draining atomic.Bool
	inflight atomic.Int64 // requests inside a handler

	mu     sync.Mutex
	status map[int]int64 // responses written, by status
}

// NewServer serves the models given (either may be nil, not both).
func NewServer(cfg ServerConfig, digit *DigitModel, sent *SentimentModel) (*Server, error) {
	switch {
	case digit == nil && sent == nil:
		return nil, errors.New("serve: no model to serve")
	case digit != nil && digit.Batcher == nil:
		return nil, errors.New("serve: the digit model has no batcher")
	case sent != nil && (sent.Batcher == nil || sent.Encode == nil):
		return nil, errors.New("serve: the sentiment model needs a batcher and an encoder")
	case cfg.MaxBody <= 0 || cfg.Timeout <= 0 || cfg.RetryAfter < 0:
		return nil, fmt.Errorf("serve: max body %d and timeout %v must be positive, retry-after %v not negative", cfg.MaxBody, cfg.Timeout, cfg.RetryAfter)
	}
	s := &Server{cfg: cfg, digit: digit, sentiment: sent, mux: http.NewServeMux(), status: map[int]int64{}}
	if digit != nil {
		s.mux.Handle("/v1/digit", predictHandler(s, digit.Batcher, DigitRequest.image, digit.Info.answerDigit))
	} else {
		s.mux.HandleFunc("/v1/digit", s.absent("this server runs no digit classifier (start it with --digit)"))
	}
	if sent != nil {
		s.mux.Handle("/v1/sentiment", predictHandler(s, sent.Batcher, sent.encode, sent.Info.answerSentiment))
	} else {
		s.mux.HandleFunc("/v1/sentiment", s.absent("this server runs no sentiment model (start it with --sentiment)"))
	}
	s.mux.HandleFunc("/healthz", s.handleHealth)
	s.mux.HandleFunc("/readyz", s.handleReady)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s (POST /v1/digit, POST /v1/sentiment, GET /healthz, GET /readyz)", r.URL.Path))
	})
	return s, nil
}

// ServeHTTP counts the request in flight and turns a panic into a 500.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	rw := &recorder{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if rw.code == 0 {
				s.fail(rw, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p))
			}
		}
		s.mu.Lock()
		s.status[rw.code]++
		s.mu.Unlock()
	}()
	s.mux.ServeHTTP(rw, r)
}

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	code int
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Responses returns how many responses the server wrote, by status.
func (s *Server) Responses() map[int]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int]int64, len(s.status))
	for k, v := range s.status {
		out[k] = v
	}
	return out
}

// BeginDrain makes /readyz answer 503, so a load balancer stops sending
// requests; requests keep being served until Drain.
func (s *Server) BeginDrain() { s.draining.Store(true) }

// Drain shuts the server down once http.Server.Shutdown has stopped new
// connections: it closes the batchers, which run every queued request
// (or, once ctx ends, refuse the rest with 503), then waits until every
// handler has written its answer or ctx ends.
func (s *Server) Drain(ctx context.Context) error {
	s.BeginDrain()
	var errs []error
	if s.digit != nil {
		errs = append(errs, s.digit.Batcher.Close(ctx))
	}
	if s.sentiment != nil {
		errs = append(errs, s.sentiment.Batcher.Close(ctx))
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			// The batchers answered every request; give the handlers
			// a moment to write those answers.
			deadline := time.Now().Add(time.Second)
			for s.inflight.Load() > 0 && time.Now().Before(deadline) {
				<-tick.C
			}
			return errors.Join(append(errs, fmt.Errorf("serve: drain: %d requests still in flight: %w", s.inflight.Load(), ctx.Err()))...)
		}
	}
	return errors.Join(errs...)
}

// errorBody is every error response.
type errorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.cfg.RetryAfter.Seconds()))))
	}
	writeJSON(w, code, errorBody{Error: msg, Status: code})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v) // the client may have left; nothing to do then
}

// decode reads exactly one JSON object into v, from a body of at most
// MaxBody bytes, with no unknown fields and nothing after it; it answers
// the error itself (413 or 400) and reports whether v was read.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: use POST with a JSON body", r.Method, r.URL.Path))
		return false
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if extra := dec.Decode(&json.RawMessage{}); extra != io.EOF {
			err = fmt.Errorf("data after the JSON object (want exactly one object)")
			if extra != nil {
				err = extra
			}
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooBig):
		s.fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over the limit of %d bytes", tooBig.Limit))
	case errors.Is(err, io.EOF):
		s.fail(w, http.StatusBadRequest, "empty body: want a JSON object")
	default:
		s.fail(w, http.StatusBadRequest, "bad JSON: "+err.Error())
	}
	return false
}

// answerErr writes the response for a failed Submit.
func (s *Server) answerErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrQueueFull):
		s.fail(w, http.StatusServiceUnavailable, "overloaded: the request queue is full; retry later")
	case errors.Is(err, ErrClosed):
		s.fail(w, http.StatusServiceUnavailable, "shutting down: the request was not run; retry on another instance")
	case errors.Is(err, context.DeadlineExceeded):
		s.fail(w, http.StatusGatewayTimeout, fmt.Sprintf("no prediction within the request deadline of %v", s.cfg.Timeout))
	case errors.Is(err, context.Canceled):
		s.fail(w, http.StatusServiceUnavailable, "request cancelled")
	default:
		s.fail(w, http.StatusInternalServerError, "model failed: "+err.Error())
	}
}

// absent answers 404 for a model the server does not run.
func (s *Server) absent(msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.fail(w, http.StatusNotFound, msg) }
}

// predictHandler is a model's endpoint: it announces the request to the
// batcher (Expect) while it decodes a Req (decode), turns
// it into the model's input (parse; its error is the client's, 400),
// submits that to the batcher under the request's deadline and writes
// answer's JSON, or the Submit error's status (answerErr).
func predictHandler[Req, In any](s *Server, b *Batcher[In, Prediction], parse func(Req) (In, error), answer func(In, Prediction) any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := b.Expect() // an adaptive batcher waits for this request
		defer arrived()
		var req Req
		if !s.decode(w, r, &req) {
			return
		}
		in, err := parse(req)
		if err != nil {
			s.fail(w, http.StatusBadRequest, err.Error())
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
		defer cancel()
		arrived()
		p, err := b.Submit(ctx, in)
		if err != nil {
			s.answerErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, answer(in, p))
	})
}

// Served names the model that answered, and warns when its weights are
// fresh (untrained).
type Served struct {
	Model   string `json:"model"`
	Warning string `json:"warning,omitempty"`
}

func (m ModelInfo) served() Served { return Served{Model: m.Name, Warning: m.warning()} }

// DigitRequest is POST /v1/digit's body: exactly one of Pixels and PNG.
type DigitRequest struct {
	Pixels []float32 `json:"pixels,omitempty"`
	PNG    string    `json:"png,omitempty"` // standard base64
}

// DigitResponse is POST /v1/digit's answer.
type DigitResponse struct {
	Class         int       `json:"class"`
	Probabilities []float32 `json:"probabilities"`
	Served
}

func (m ModelInfo) answerDigit(_ []float32, p Prediction) any {
	return DigitResponse{Class: p.Class, Probabilities: p.Probs, Served: m.served()}
}

// image returns the request's Pixels values: the pixels as given, each
// in [0, 1], or the PNG, which must be 28×28, converted to 8-bit gray
// and scaled by 1/255.
func (q DigitRequest) image() ([]float32, error) {
	switch {
	case q.Pixels != nil && q.PNG != "":
		return nil, errors.New(`give "pixels" or "png", not both`)
	case q.Pixels != nil:
		if len(q.Pixels) != Pixels {
			return nil, fmt.Errorf(`"pixels" has %d values, want %d (28×28, row-major)`, len(q.Pixels), Pixels)
		}
		for i, v := range q.Pixels {
			if !(v >= 0 && v <= 1) {
				return nil, fmt.Errorf(`"pixels"[%d] = %g, want a value in [0, 1] (p/255)`, i, v)
			}
		}
		return q.Pixels, nil
	case q.PNG != "":
		return decodePNG(q.PNG)
	}
	return nil, errors.New(`want "pixels" (784 numbers) or "png" (base64 of a 28×28 PNG)`)
}

// decodePNG decodes a base64 28×28 PNG to gray pixels in [0, 1]. The
// header's size is checked before the pixels are decoded, so a large
// image costs nothing.
func decodePNG(b64 string) ([]float32, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf(`"png": not standard base64: %v`, err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf(`"png": %v`, err)
	}
	if cfg.Width != 28 || cfg.Height != 28 {
		return nil, fmt.Errorf(`"png" is %d×%d, want 28×28`, cfg.Width, cfg.Height)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf(`"png": %v`, err)
	}
	return grayPixels(img), nil
}

// grayPixels returns img's pixels, row-major, as 8-bit gray over 255
// (color.GrayModel's luma for a colour image); a gray PNG, the usual
// digit, is read straight from its pixel bytes.
func grayPixels(img image.Image) []float32 {
	b := img.Bounds()
	out := make([]float32, 0, b.Dx()*b.Dy())
	if g, ok := img.(*image.Gray); ok {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := g.Pix[g.PixOffset(b.Min.X, y):g.PixOffset(b.Max.X, y)]
			for _, p := range row {
				out = append(out, float32(p)/255)
			}
		}
		return out
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
			out = append(out, float32(g.Y)/255)
		}
	}
	return out
}

// SentimentRequest is POST /v1/sentiment's body.
type SentimentRequest struct {
	Text string `json:"text"`
}

// SentimentResponse is POST /v1/sentiment's answer; Probabilities are
// indexed by label (imdb.Positive 0, imdb.Negative 1).
type SentimentResponse struct {
	Label         string    `json:"label"`
	Probability   float32   `json:"probability"`
	Probabilities []float32 `json:"probabilities"`
	Words         int       `json:"words"`
	Served
}

// encode is SentimentRequest's parse: the text's ids, at most MaxWords
// of them, with the error naming the field.
func (m *SentimentModel) encode(req SentimentRequest) ([]int64, error) {
	ids, err := m.Encode(req.Text)
	if err != nil {
		return nil, fmt.Errorf(`"text": %w`, err)
	}
	if m.MaxWords > 0 && len(ids) > m.MaxWords {
		return nil, fmt.Errorf(`"text" has %d words, more than this server's limit of %d`, len(ids), m.MaxWords)
	}
	return ids, nil
}

func (m ModelInfo) answerSentiment(ids []int64, p Prediction) any {
	label := "positive"
	if p.Class == imdb.Negative {
		label = "negative"
	}
	return SentimentResponse{Label: label, Probability: p.Probs[p.Class], Probabilities: p.Probs, Words: len(ids), Served: m.served()}
}

// health is /healthz's answer.
type health struct {
	Status string        `json:"status"`
	Ready  bool          `json:"ready"`
	Models []modelHealth `json:"models"`
}

type modelHealth struct {
	ModelInfo
	Warning   string  `json:"warning,omitempty"`
	MaxBatch  int     `json:"max_batch"`
	MaxWaitMS float64 `json:"max_wait_ms"`
	Batches   int64   `json:"batches"`
	Requests  int64   `json:"requests"`
	MeanBatch float64 `json:"mean_batch"`
}

func newModelHealth(info ModelInfo, cfg BatchConfig, batches, items int64) modelHealth {
	h := modelHealth{ModelInfo: info, Warning: info.warning(), MaxBatch: cfg.MaxBatch,
		MaxWaitMS: float64(cfg.MaxWait) / float64(time.Millisecond), Batches: batches, Requests: items}
	if batches > 0 {
		h.MeanBatch = float64(items) / float64(batches)
	}
	return h
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := health{Status: "ok", Ready: !s.draining.Load()}
	if s.digit != nil {
		b, n := s.digit.Batcher.Stats()
		h.Models = append(h.Models, newModelHealth(s.digit.Info, s.digit.Batcher.Config(), b, n))
	}
	if s.sentiment != nil {
		b, n := s.sentiment.Batcher.Stats()
		h.Models = append(h.Models, newModelHealth(s.sentiment.Info, s.sentiment.Batcher.Config(), b, n))
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		s.fail(w, http.StatusServiceUnavailable, "draining: shutting down")
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ready": true})
}
