// Package metrics measures models: accuracy and top-k accuracy,
// precision, recall and F1 from a confusion matrix, chunk precision,
// recall and F1 over IOB/IOE/IOBES tag sequences (Paddle's chunk_eval),
// corpus BLEU-4 (sacreBLEU's default), perplexity, RMSE and ROC AUC.
//
// Each works on plain Go slices, so an evaluator can feed it whatever a
// model produced; Argmax turns a row-major score matrix into predicted
// classes. A function given inputs that do not fit (lengths that differ, a
// class out of range) returns an error naming it and the sizes.
package metrics
