"""A local Ray instance for the tests of ``--engine ray`` (import the fixture into a test module).

Module scope: Ray's start-up is the slow part (several seconds on 2 cores), so a module starts it
once for all its tests. Two CPUs, as the issue's "2 workers"; no dashboard; the workers' output is
not copied to the test's stderr. The commands under test run in the test process (``run_cli``), so
they find Ray joined and use this instance (``ray_cluster.ray_session``).
"""

from __future__ import annotations

import signal

import pytest


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    sigterm = signal.getsignal(signal.SIGTERM)  # ray.init installs its own and shutdown leaves it
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    signal.signal(signal.SIGTERM, sigterm)
