"""A training program for the real node's tests that saves only when it is told to stop, for the
jobs whose every process is a pod of its own (a PyTorchJob's master and workers, a TFJob's
tasks): each process steps once per --step-seconds; on SIGTERM the first process (RANK 0 as
training-operator sets it for a PyTorchJob; a TFJob's chief, or its worker 0) takes
--save-seconds to save (a slow save) and writes {"step", "world_size"} to --checkpoint (by default
state.json in the folder TRAINING_CHECKPOINT_PATH names, as the provider sets it for a job with a
checkpoint); at the start every process reads it. It prints JSON lines:
  {"event": "start", "rank", "world_size", "resumed_from"}   every process, at its start
  {"event": "step", "step", "world_size"}                    the first process, each step
  {"event": "saved", "step", "world_size"}                   the first process, once it saved
"""
import argparse
import json
import os
import signal
import time

stopping = False


def on_sigterm(signum, frame):
    global stopping
    stopping = True


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def rank_and_world():
    """This process's rank and the job's world size, from training-operator's environment."""
    if "TF_CONFIG" in os.environ:
        config = json.loads(os.environ["TF_CONFIG"])
        cluster, task = config["cluster"], config["task"]
        order = [(kind, i) for kind in ("chief", "worker", "ps", "evaluator") for i in range(len(cluster.get(kind, [])))]
        return order.index((task["type"], task["index"])), len(order)
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", help="the file the training is saved to; by default state.json under $TRAINING_CHECKPOINT_PATH")
    p.add_argument("--step-seconds", type=float, default=1.0)
    p.add_argument("--save-seconds", type=float, default=3.0)
    args = p.parse_args()
    if args.checkpoint is None:
        args.checkpoint = os.path.join(os.environ["TRAINING_CHECKPOINT_PATH"], "state.json")
    signal.signal(signal.SIGTERM, on_sigterm)

    rank, world = rank_and_world()
    step = 0
    if os.path.exists(args.checkpoint):
        with open(args.checkpoint) as f:
            step = json.load(f)["step"]
    emit(event="start", rank=rank, world_size=world, resumed_from=step)

    while not stopping:
        time.sleep(args.step_seconds)
        if stopping:
            break
        step += 1
        if rank == 0:
            emit(event="step", step=step, world_size=world)

    if rank == 0:
        time.sleep(args.save_seconds)
        os.makedirs(os.path.dirname(args.checkpoint), exist_ok=True)
        tmp = args.checkpoint + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"step": step, "world_size": world}, f)
        os.replace(tmp, args.checkpoint)
        emit(event="saved", step=step, world_size=world)


if __name__ == "__main__":
    main()
