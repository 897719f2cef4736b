// Package plumb is an embeddable deep-learning library for Go: models are
// built and trained inside an ordinary Go program, with no Python, no cgo
// in the default build and no separate runtime, and every op is checked
// against outputs recorded from TensorFlow.
//
// This root package holds no code; the library is a set of small
// packages, each with one job, used together:
//
//   - tensor: dense and ragged tensors, views, seeded initialisers, the
//     storage pool, and the device interface.
//   - ops: every operation, with its checks, forward and backward passes
//     and CPU kernels, and ops.Dispatch, where an op meets a device.
//   - graph: define-by-run autodiff. A Tape records ops as they run, so
//     shapes may change from batch to batch; errors are values that flow
//     through later ops and come out of Backward.
//   - layers: dense, convolutional (with Winograd), normalisation,
//     dropout, embedding, recurrent (LSTM, GRU), attention (multi-head,
//     Bahdanau, an attention decoder), sequence pooling and convolution,
//     and CRF layers, and Transformer encoder and decoder layers (masks,
//     position embeddings, label smoothing, tied output), with sizes in
//     config structs.
//   - initializer: Glorot, He, orthogonal, uniform and normal weights
//     from one seeded generator.
//   - optim: optimizers with TensorFlow's update formulas, schedules and
//     clipping.
//   - train: the training loop every model shares (evaluation, best
//     epoch, resume, early stopping, progress); metrics, decode (greedy
//     and beam search), checkpoint (safetensors whose metadata names the
//     model) and runlog (run logs, plots, TensorBoard events) around it.
//   - data: datasets of dense and ragged fields, loaders and streams,
//     vocabularies, and bounded readers of the book's corpora: mnist,
//     cifar10 (the binary batches), imagefolder (JPEG and PNG trees such
//     as CIFAR-10's), imdb, ptb, movielens, conll05 and parallel text
//     (Multi30k).
//   - dist: data-parallel training over MPI.
//   - ops/cuda: CUDA kernels behind the cuda build tag.
//   - onnx: a bounded reader of ONNX models; onnx/run runs their graphs
//     on Plumb's ops, with shapes folded at load time.
//   - infer: compiled inference plans: a traced forward pass with batch
//     norm folded, weights packed once and intermediates in one arena.
//   - text: BERT's WordPiece tokenizer (vocab.txt).
//   - models: the PaddlePaddle book's seven chapters (mnist, cifar,
//     word2vec, recommender, sentiment, srl, translate), each a row of
//     cmd/plumb's one driver (models/chapter): plumb train, eval,
//     predict and summary <chapter>; and bert, Hugging Face's BertModel
//     (its parameter names, config.json and safetensors checkpoints).
//   - parity: the TensorFlow goldens and the harness that compares them.
//   - bench: side-by-side benchmarks against Keras and PyTorch, and the
//     KPIs a run is checked against.
//   - cmd/plumb: the command line.
//   - examples: programs built on the library (examples/serve, an HTTP
//     inference server with dynamic batching).
//
// A training step reads like the math: build a tape, run the model, take
// the loss, call Backward, step the optimizer (see the example). README.md
// is the front door, docs/ holds the guides, and ARCHITECTURE.md the
// design.
package plumb
