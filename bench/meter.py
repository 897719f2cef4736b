"""Running totals of a training run for the recipes in bench/: each step
adds its loss and size; every log_every steps a line is printed and a
"step" record written to the run log, and each epoch ends with a line and
an "epoch" record, as `plumb train` prints and logs them."""
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
