"""Where a sweep runs: the one ``--scheduler`` option, on Dask ``distributed``.

* ``local`` (default) — an embedded cluster for this sweep: ``dask_cuda.LocalCUDACluster`` (one
  worker per GPU) when the task wants a GPU and one is present, else ``distributed.LocalCluster``
  with one single-threaded worker process per core (``workers`` overrides the count);
* ``tcp://host:port`` (also ``tls://``, ``ws://``, ``wss://``) — an existing cluster started with
  ``dask scheduler`` and ``dask worker`` / ``dask cuda worker`` (possibly on other machines);
* ``none`` — serial, in this process (for debugging; no Dask needed).

:func:`connect` returns a :class:`Connection` (the Dask client, or none for serial) that closes
cleanly: for an embedded cluster, its workers are stopped; for an address, only this client's
tasks are cancelled and the cluster keeps running.  An unreachable address or a cluster without
workers gives one :class:`InvalidParameter` message.  Qt-free.
"""
from __future__ import annotations

# Imports inside functions: Dask loads when a cluster is used (slow to import); dask_cuda, CuPy optional.
import importlib.util
import os
import re
from dataclasses import dataclass, field

from ..errors import InvalidParameter
import socket
import logging
from .. import backend as bk

#: the scheduler choices besides an address
NAMES = ("local", "none")
_ADDRESS = re.compile(r"(tcp|tls|ws|wss)://(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})$")
#: seconds to wait for a scheduler address to answer, and for its first worker
CONNECT_TIMEOUT = 10.0


def parse_scheduler(text) -> str:
    """``local``, ``none`` or a scheduler address ``tcp://host:port``; InvalidParameter otherwise."""
    s = str(text if text is not None else "local").strip()
    if s.lower() in NAMES:
        return s.lower()
    m = _ADDRESS.match(s)
    if not m or not 0 < int(m.group(3)) < 65536:
        raise InvalidParameter(f"scheduler {s!r}: use local, none or an address such as tcp://host:8786")
    return s


def dask_available() -> str | None:
    """None when ``distributed`` can be imported, else what to install."""
    if importlib.util.find_spec("distributed") is None:
        return "Dask is not installed: pip install distributed (or pip install -e .), or use --scheduler none"
    return None


def dashboard_available() -> bool:
    """Dask's dashboard needs bokeh."""
    return importlib.util.find_spec("bokeh") is not None


def local_gpu_count() -> int:
    """CUDA GPUs usable here (0 without CuPy or a device)."""
    ok, _why = bk.gpu_available()
    if not ok:
        return 0
    import cupy
    return int(cupy.cuda.runtime.getDeviceCount())


def probe_worker() -> dict:
    """Run on a worker: its host, process, cores and GPU (``gpu``: device name or "")."""

    ok, why = bk.gpu_available()
    return {"host": socket.gethostname(), "pid": os.getpid(), "cores": os.cpu_count() or 1,
            "gpu": why if ok else "", "no_gpu_reason": "" if ok else why}


@dataclass
class Connection:
    """A connected scheduler.  ``client`` is None for ``none`` (serial)."""

    scheduler: str
    client: object = None
    cluster: object = None
    kind: str = "serial"                  # serial, local-cpu, local-gpu, remote
    notes: list = field(default_factory=list)

    @property
    def serial(self) -> bool:
        return self.client is None

    def workers(self) -> dict:
        """{address: {"nthreads": …, "host": …}} of the workers now connected ({} for serial)."""
        if self.client is None:
            return {}
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:                                  # older distributed: no n_workers argument
            info = self.client.scheduler_info()
        except Exception:                                  # noqa: BLE001 — scheduler gone: no workers
            return {}
        return {a: {"nthreads": w.get("nthreads", 1), "host": w.get("host", ""), "name": w.get("name", a)}
                for a, w in info.get("workers", {}).items()}

    def threads(self) -> int:
        """Tasks that can run at once (1 for serial)."""
        return max(1, sum(w["nthreads"] for w in self.workers().values())) if self.client else 1

    def dashboard_link(self) -> str:
        """The scheduler's dashboard URL, "" when it has none (bokeh missing) or for serial."""
        if self.client is None or not dashboard_available():
            return ""
        try:
            return str(self.client.dashboard_link or "")
        except Exception:                                  # noqa: BLE001
            return ""

    def gpu_workers(self) -> tuple[list[str], str]:
        """(addresses of workers with a usable GPU, a reason from one without)."""
        if self.client is None:
            ok, why = bk.gpu_available()
            return (["(this process)"] if ok else []), ("" if ok else why)
        res = self.client.run(probe_worker)
        good = [a for a, d in res.items() if d.get("gpu")]
        why = next((d["no_gpu_reason"] for d in res.values() if not d.get("gpu")), "")
        return good, why

    def close(self) -> None:
        """Stop an embedded cluster; for an address only disconnect (the cluster keeps running)."""
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        try:
            if client is not None:
                client.close(timeout=10)
        finally:
            if cluster is not None:
                cluster.close(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _quiet_logs() -> None:
    """Dask's INFO lines (workers starting, tasks stolen) are not the user's business on the CLI."""
    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker",
                 "distributed.core", "distributed.http.proxy"):
        logging.getLogger(name).setLevel(logging.WARNING)


def worker_environment(ngpu: int = 0, workers: int | None = None) -> dict:
    """Dask settings for the worker processes of an embedded cluster.

    * ``MALLOC_TRIM_THRESHOLD_`` is left unset (Dask sets 64 KiB by default, which also freezes
      glibc's adaptive mmap threshold: the α-model generator of the graph sweeps ran 45 % slower
      in such a worker — benchmarks/RESULTS.md, Sweeps);
    * Dask's statistical profiler (a stack sample every 10 ms, for the dashboard's Profile page) is
      off: its wake-ups contend for the GIL with the task's thread;
    * one worker per GPU may use the cores of its share of the host for OpenMP / BLAS threads
      (cores // GPUs); one worker per core keeps one thread each (Dask's default)."""
    env = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
           "distributed.worker.profile.enabled": False}
    if ngpu:
        n = min(ngpu, int(workers)) if workers else ngpu
        threads = max(1, (os.cpu_count() or 1) // n)
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[f"distributed.nanny.pre-spawn-environ.{var}"] = threads
    return env


def _unreachable(scheduler: str, exc: BaseException) -> InvalidParameter:
    first = str(exc).splitlines()[0] if str(exc).strip() else "no answer"
    return InvalidParameter(f"cannot reach the Dask scheduler at {scheduler} ({type(exc).__name__}: {first}); "
                            f"start one with 'dask scheduler' and workers with 'dask worker {scheduler}', or use "
                            "--scheduler local")


def probe_scheduler(address: str, timeout: float | None = None) -> None:
    """Ask ``address`` who it is (Dask's ``identity`` call) before a client is built: a server that
    is not a Dask scheduler (its reply is not Dask's protocol — read as a frame of absurd size, it
    surfaced as MemoryError) or none at all is one :class:`InvalidParameter` naming the address and
    the real cause, and no half-built client is left to print a traceback when collected."""
    import asyncio

    from distributed.comm import connect as comm_connect
    timeout = CONNECT_TIMEOUT if timeout is None else timeout

    async def ask():
        comm = await comm_connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        reply = asyncio.run(asyncio.wait_for(ask(), timeout + 1))
    except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
        raise _unreachable(address, exc) from None
    except Exception as exc:  # noqa: BLE001 — MemoryError, decode errors: not Dask's protocol
        raise InvalidParameter(f"the server at {address} is not a Dask scheduler (its reply is not Dask's "
                               f"protocol: {type(exc).__name__}); check the address and port") from None
    if not (isinstance(reply, dict) and str(reply.get("type", "")).lower() == "scheduler"):
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise InvalidParameter(f"the server at {address} is not a Dask scheduler (it says it is {kind!r}); "
                               "check the address and port")


SHARED_PER_GPU = 8   # default worker processes sharing the GPU for a task that shares it (each holds a CUDA context)


def connect(scheduler: str = "local", workers: int | None = None, gpu: bool = False,
            config: dict | None = None, gpu_shared: bool = False) -> Connection:
    """Open the scheduler named by ``scheduler`` (see the module docstring).

    ``workers``: processes of an embedded CPU cluster (default: the core count); with ``gpu`` a
    local cluster is one worker per GPU (``workers`` caps it), or with ``gpu_shared`` (a task whose
    points use the GPU lightly, :attr:`SweepTask.shares_gpu`) ``workers`` processes sharing the
    first GPU (default: the core count, at most SHARED_PER_GPU).  ``config``: Dask settings
    for an embedded cluster (e.g. ``{"distributed.scheduler.allowed-failures": 0}``)."""
    scheduler = parse_scheduler(scheduler)
    if workers is not None and int(workers) < 1:
        raise InvalidParameter(f"workers must be ≥ 1 (got {workers})")
    if scheduler == "none":
        return Connection("none")
    why = dask_available()
    if why:
        raise InvalidParameter(why)
    import dask
    from distributed import Client
    _quiet_logs()
    if scheduler != "local":
        probe_scheduler(scheduler)
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise _unreachable(scheduler, exc) from None
        conn = Connection(scheduler, client, None, "remote")
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            conn.close()
            raise InvalidParameter(f"the Dask scheduler at {scheduler} has no workers: start some with "
                                   f"'dask worker {scheduler}' (or 'dask cuda worker {scheduler}' on GPU machines)") from None
        return conn
    ngpu = local_gpu_count() if gpu else 0
    shared = bool(ngpu and gpu_shared)
    cfg = {"distributed.worker.daemon": False, "distributed.admin.system-monitor.gil.enabled": False}
    cfg.update(worker_environment(0 if shared else ngpu, workers))
    cfg.update(config or {})
    dash = ":0"        # any free port: two local clusters at once (parallel tests) never collide on 8787
    with dask.config.set(cfg):
        if shared:
            from distributed import LocalCluster
            n = int(workers) if workers else min(os.cpu_count() or 1, SHARED_PER_GPU)
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=dash,
                                   silence_logs=40)
            kind = "local-gpu"
            notes = [f"{n} worker processes share GPU 0" + (f" (of {ngpu})" if ngpu > 1 else "")]
        elif ngpu:
            n = min(ngpu, int(workers)) if workers else ngpu
            try:
                from dask_cuda import LocalCUDACluster
            except Exception as exc:  # noqa: BLE001 — not installed, or not importable with this CUDA
                LocalCUDACluster, why = None, f"{type(exc).__name__}: {exc}"
            if LocalCUDACluster is not None:
                cluster = LocalCUDACluster(n_workers=n, CUDA_VISIBLE_DEVICES=list(range(n)), threads_per_worker=1,
                                           dashboard_address=dash, silence_logs=40)
                kind, notes = "local-gpu", []
            else:
                from distributed import LocalCluster
                cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=dash, silence_logs=40)
                kind = "local-gpu"
                notes = [f"dask-cuda is not usable ({why}): one worker on the first GPU (pip install "
                         "dask-cuda for one worker per GPU)"]
        else:
            from distributed import LocalCluster
            n = int(workers) if workers else (os.cpu_count() or 1)
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=dash,
                                   silence_logs=40)
            kind, notes = "local-cpu", []
        client = Client(cluster, set_as_default=False)
    return Connection("local", client, cluster, kind, notes)
