"""Starting Ray, once for every command that runs on it (``from-dump``,
``embed``, ``utility``): a Ray of our own on this machine, or a cluster
started apart (``ray start --head``), joined by its address."""

from __future__ import annotations

from typing import Any

__all__ = ["init_ray"]

#: ``ray.init`` options of every command: no dashboard, the workers' logs
#: kept out of the command's output.
RAY_OPTIONS: dict[str, Any] = {
    "include_dashboard": False,
    "log_to_driver": False,
    "logging_level": "ERROR",
}


def init_ray(
    address: str | None,
    num_cpus: int | None,
    error: type[Exception],
    install: str,
) -> tuple[Any, bool]:
    """Import and start Ray unless this process already did.

    Args:
        address: A cluster's address (``auto``, ``host:6379``,
            ``ray://host:10001``), or None for a Ray of our own on this
            machine (``address="local"``: never another process's cluster
            found through /tmp/ray, which would refuse ``num_cpus``).
        num_cpus: CPUs of our own Ray (None: all); unused with ``address``.
        error: The command's error class, raised with one line.
        install: The extra that brings Ray, e.g. ``kilt-chunks[rag]``.

    Returns:
        ``(ray, started)``: the module, and whether this call started it
        (the caller then calls ``ray.shutdown()`` when done).

    Raises:
        error: If Ray is not installed, or the cluster at ``address`` cannot
            be reached (the message names the address and, for Ray 2.59 or
            later, the token a cluster may ask for).
    """
    try:
        import ray
    except ImportError as exc:
        raise error(f"--engine ray needs Ray: pip install '{install}'") from exc
    if ray.is_initialized():
        return ray, False
    if not address:
        ray.init(address="local", num_cpus=num_cpus, **RAY_OPTIONS)
        return ray, True
    try:
        ray.init(address=address, **RAY_OPTIONS)
    except (ConnectionError, RuntimeError) as exc:
        raise error(
            f"cannot connect to the Ray cluster at {address}: "
            f"{str(exc).splitlines()[0]}. A cluster of Ray 2.59 or "
            "later may use token authentication: run with "
            "RAY_AUTH_MODE=token and the cluster's token "
            "(RAY_AUTH_TOKEN, or ~/.ray/auth_token)"
        ) from exc
    return ray, True
