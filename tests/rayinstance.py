"""A local Ray instance for the tests of ``--engine ray`` (a fixture of tests/conftest.py).

Session scope: Ray's start-up is the slow part (8-16 s on 2 cores), so the suite starts it once
for every test that uses it (tests/conftest.py runs those tests last, together, so the instance
does not idle through the rest of the suite). Two CPUs, as the issue's "2 workers"; no dashboard; the workers' output is
not copied to the test's stderr. The commands under test run in the test process (``run_cli``), so
they find Ray joined and use this instance (``ray_cluster.ray_session``).
"""

from __future__ import annotations

import signal

import pytest


@pytest.fixture(scope="session")
def ray_instance():
    ray = pytest.importorskip("ray")
    sigterm = signal.getsignal(signal.SIGTERM)  # ray.init installs its own and shutdown leaves it
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    signal.signal(signal.SIGTERM, sigterm)
