"""An MPI program for the real node's tests that saves its training only when it is told to stop,
as a program without periodic checkpoints does: every rank steps once per --step-seconds; on
SIGTERM rank 0 takes --save-seconds to save (a slow save) and writes {"step", "world_size"} to
--checkpoint (state.json in $TRAINING_CHECKPOINT_PATH, which the provider sets, by default), and
a run that finds that file starts from its step. Rank 0 prints JSON lines:
  {"event": "start", "world_size", "resumed_from", "hosts"}   at the start, hosts being where
                                                            every rank runs
  {"event": "step", "step", "world_size"}                    each step
  {"event": "saved", "step", "world_size"}                   once the save is written
Ranks exchange nothing while they step, so that a rank told to stop never waits on one that was
not: the start's gather is the proof that every rank of the world took part.
"""
import argparse
import json
import os
import signal
import socket
import time

from mpi4py import MPI

stopping = False


def on_sigterm(signum, frame):
    global stopping
    stopping = True


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def main():
    p = argparse.ArgumentParser()
    folder = os.environ.get("TRAINING_CHECKPOINT_PATH")
    p.add_argument("--checkpoint", required=folder is None, default=folder and os.path.join(folder, "state.json"),
                   help="the file the training is saved to (default: state.json in $TRAINING_CHECKPOINT_PATH)")
    p.add_argument("--step-seconds", type=float, default=1.0)
    p.add_argument("--save-seconds", type=float, default=3.0)
    args = p.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    step = 0
    if rank == 0 and os.path.exists(args.checkpoint):
        with open(args.checkpoint) as f:
            step = json.load(f)["step"]
    step = comm.bcast(step, root=0)
    hosts = comm.gather(socket.gethostname(), root=0)
    if rank == 0:
        emit(event="start", world_size=size, resumed_from=step, hosts=sorted(set(hosts)))

    while not stopping:
        time.sleep(args.step_seconds)
        if stopping:
            break
        step += 1
        if rank == 0:
            emit(event="step", step=step, world_size=size)

    if rank == 0:
        time.sleep(args.save_seconds)
        os.makedirs(os.path.dirname(args.checkpoint), exist_ok=True)
        tmp = args.checkpoint + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"step": step, "world_size": size}, f)
        os.replace(tmp, args.checkpoint)
        emit(event="saved", step=step, world_size=size)


if __name__ == "__main__":
    main()
