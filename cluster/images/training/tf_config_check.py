"""A TF_CONFIG check for the real node's tests (TensorFlow is not in Debian): each task parses
TF_CONFIG, listens on its own address's port, and connects to every task the cluster spec lists,
by the names given there, until it has reached them all. It prints one JSON line and exits 0:
  {"event": "tf_config", "task", "index", "tasks", "reached"}
"""
import json
import os
import socket
import threading
import time


def main():
    config = json.loads(os.environ["TF_CONFIG"])
    me = config["task"]
    addresses = [(kind, i, addr) for kind, addrs in sorted(config["cluster"].items()) for i, addr in enumerate(addrs)]
    own = config["cluster"][me["type"]][me["index"]]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("", int(own.rsplit(":", 1)[1])))
    server.listen(64)
    threading.Thread(target=lambda: [server.accept()[0].close() for _ in iter(int, 1)], daemon=True).start()
    reached = []
    deadline = time.time() + 300
    for kind, i, addr in addresses:
        host, port = addr.rsplit(":", 1)
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=2).close()
                reached.append(addr)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
    print(json.dumps({"event": "tf_config", "task": me["type"], "index": me["index"],
                      "tasks": [a for _, _, a in addresses], "reached": reached}, sort_keys=True), flush=True)
    # Stay up a while, so that the tasks that started last can reach this one too.
    time.sleep(20)


if __name__ == "__main__":
    main()
