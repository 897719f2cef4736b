// Package dist trains one model on several processes at once
// (data-parallel training) over MPI, the collective engine that Horovod
// and HPC trainers use: every rank holds the whole model, trains on its
// own shard of each epoch, and after every backward pass the ranks'
// gradients are averaged with an allreduce, so every rank applies the same
// update and the copies stay identical.
//
// Comm is the group: rank, size, allreduce (sum; Replicas turns it into
// an average), broadcast, allgather and barrier. Open joins the group the
// process was launched in. Built with -tags mpi (cgo against Open MPI's
// libmpi, found with pkg-config ompi-c), that is MPI_COMM_WORLD of the
// processes mpirun started; the default build stays pure Go and Open
// returns the one-process group, so code written against Comm needs no
// build tags. NewGroup connects goroutines in memory, for tests.
//
// Replicas is what the trainer (train.Config.Replicas) uses: SyncParams
// broadcasts rank 0's parameters; AverageGradients averages gradients
// weighted by each rank's examples, fused into buckets of up to 16 MiB
// per dtype (one MPI call per bucket, not per tensor) after one small
// allreduce that carries the losses, the example counts and which
// parameters have which kind of gradient; embedding tables whose gradient
// is sparse on every rank travel as gathered rows (GatherRows).
// Communication does not overlap the backward pass: graph.Tape.Backward
// has no per-parameter "gradient ready" callback yet, and the book
// models' gradients are small enough that an allreduce on one machine is a
// small part of a step (docs/benchmarks.md).
//
// Agreement. Ranks that run different models, recipes or data would
// fail in a broadcast on one rank while the others wait, or train to the
// end with copies that drift apart. So the ranks first exchange a
// Fingerprint (Agree: one allgather) and compare each with rank 0's; on
// any difference every rank returns the same *Mismatch, naming the field
// and both values. SyncParams compares ModelFingerprint (every
// parameter's name, dtype and shape, in order, optimizer state included)
// before its broadcasts; plumb's --dist start-up compares
// RecipeFingerprint of the run's settings (learning rate, batch, seed,
// optimizer, epochs, model, dtype, the datasets' sizes after --limit).
// Values and file paths are not compared.
//
// Failures. A rank that stops with an error should print it and call
// Abort (MPI_Abort), as plumb does, which ends every rank of the job at
// once, whatever collective they wait in. Every MPI call runs on one OS
// thread (MPI_THREAD_FUNNELED) while the caller waits with a deadline: a
// collective that does not complete within Timeout (PLUMB_DIST_TIMEOUT,
// default 10 minutes) returns an error naming the rank, the call and the
// deadline, the trainer stops with it, and the process aborts the job
// (or exits non-zero without MPI_Finalize, which makes mpirun end the
// other ranks). That covers a rank that hangs (a deadlock, a stopped
// process, a lost machine whose connections stay open). A rank that dies
// is seen by mpirun at once: it ends every other rank with SIGTERM, and
// Open's handler prints which rank was ended and why before exiting. MPI
// errors are returned as Go errors (MPI_ERRORS_RETURN) rather than aborting
// inside the library. The deadline must exceed the longest time one rank
// works alone between two collectives: a step, or rank 0's evaluation and
// checkpoint at the end of an epoch. A job restarted after a failure
// resumes from the last state file rank 0 wrote (train.Config.StatePath,
// written atomically).
package dist
