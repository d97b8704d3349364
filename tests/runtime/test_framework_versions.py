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



def test_installed_torch_is_the_release_the_backend_is_tested_with():
    import torch
    from autograph.runtime.torch import compat as torch_compat
    assert torch.__version__.split("+")[0] == torch_compat.TESTED_VERSION


def test_another_torch_release_gets_a_warning_naming_both():
    from autograph.runtime.torch import compat as torch_compat
    with pytest.warns(RuntimeWarning, match=r"tested with torch 2\.13\.0, and torch 2\.99\.1 is installed.*"
                                            r"install torch==2\.13\.0"):
        torch_compat.check_version("2.99.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch_compat.check_version("2.13.0+cpu")
