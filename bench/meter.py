"""Running totals of a training run for the recipes in bench/: each step
adds its loss and size; every log_every steps a line is printed and a
"step" record written to the run log, and each epoch ends with a line and
an "epoch" record, as `plumb train` prints and logs them. run_epochs is the
whole loop of the book chapters' recipes (book_keras.py, book_torch.py)."""
import time


class Meter:
    def __init__(self, log, log_every, lr, loss_name, unit):
        self.log, self.every, self.lr = log, log_every, lr
        self.loss_name, self.unit = loss_name, unit
        self.step = self.seen = 0

    def start(self, epoch):
        self.epoch, self.began = epoch, time.perf_counter()
        self.total, self.n, self.run, self.rn = 0.0, 0, 0.0, 0

    def add(self, loss, n):
        """Counts a step of mean loss over n examples (sequences or words)."""
        self.step, self.seen = self.step + 1, self.seen + n
        self.total, self.n, self.run, self.rn = self.total + loss * n, self.n + n, self.run + loss, self.rn + 1
        self.rate = self.n / (time.perf_counter() - self.began)
        if self.step % self.every == 0:
            print(f"epoch {self.epoch} step {self.step}: {self.loss_name} {self.run / self.rn:.4f} (mean of the last {self.rn} batches), "
                  f"{self.rate:.1f} {self.unit}/s", flush=True)
            self.log.write(kind="step", epoch=self.epoch, step=self.step, examples=self.seen, loss=self.total / self.n,
                           samples_per_sec=self.rate, lr=self.lr)
            self.run, self.rn = 0.0, 0

    def end(self, epochs, metrics, summary):
        """Ends the epoch with its metrics, summary describing them."""
        print(f"epoch {self.epoch}/{epochs}: train {self.loss_name} {self.total / self.n:.4f}, {summary} ({self.rate:.1f} {self.unit}/s)", flush=True)
        self.log.write(kind="epoch", epoch=self.epoch, step=self.step, examples=self.seen, loss=self.total / self.n,
                       samples_per_sec=self.rate, metrics=metrics)


def run_epochs(log, framework, name, epochs, lr, log_every, batches, step, evaluate):
    """Trains a book recipe for epochs passes and closes log: batches(epoch)
    yields each step's rows, step(rows) trains on them and returns their
    mean loss, evaluate() returns the epoch's metrics. A "step" record goes
    to the run log every log_every steps; each epoch ends with an "epoch"
    record and a line."""
    step_n, seen = 0, 0
    for epoch in range(1, epochs + 1):
        start, loss_sum, done = time.perf_counter(), 0.0, 0
        for idx in batches(epoch):
            loss = step(idx)
            step_n, done = step_n + 1, done + len(idx)
            loss_sum += loss * len(idx)
            if step_n % log_every == 0:
                log.write(kind="step", epoch=epoch, step=step_n, examples=seen + done, loss=loss_sum / done,
                          samples_per_sec=done / (time.perf_counter() - start), lr=lr)
        dur = time.perf_counter() - start
        seen += done
        metrics = evaluate()
        log.write(kind="epoch", epoch=epoch, step=step_n, examples=seen, loss=loss_sum / done, metrics=metrics,
                  samples_per_sec=done / dur, lr=lr)
        print(f"{framework} {name} epoch {epoch}: train loss {loss_sum / done:.4f}, {metrics}, {done / dur:.0f} samples/s", flush=True)
    log.close()
