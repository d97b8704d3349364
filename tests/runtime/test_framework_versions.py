"""The framework releases the backends are tested with: the test extra
installs them, and another release gets one warning that names it and the
one to install, not a failure deep inside a trace."""

import warnings

import jax
import pytest
from autograph.runtime.jax import compat as jax_compat


def test_installed_jax_is_the_release_the_backend_is_tested_with():
    assert jax.__version__ == jax_compat.TESTED_VERSION


def test_the_tested_jax_release_gets_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax_compat.check_version(jax_compat.TESTED_VERSION)


def test_another_jax_release_gets_a_warning_naming_both():
    with pytest.warns(RuntimeWarning, match=r"tested with jax 0\.10\.2, and jax 0\.9\.0 is installed.*"
                                            r"install jax==0\.10\.2"):
        jax_compat.check_version("0.9.0")

