"""The driver layer on a machine that may have no GPU: nothing raises until a GPU is needed."""

import dataclasses

import pytest

from threadtile.errors import CudaDriverError
from threadtile.runtime import driver


def test_gpu_available_never_raises():
    assert driver.gpu_available() in (True, False)
    assert isinstance(driver.device_count(), int)


@pytest.mark.skipif(driver.gpu_available(), reason="checks the no-GPU behaviour")
def test_without_a_gpu():
    assert driver.device_count() == 0
    driver.synchronize()  # a no-op, not an error
    with pytest.raises(CudaDriverError, match="compile without a GPU|CUDA_ERROR_NO_DEVICE"):
        driver.current_device()


def test_check_names_the_cuda_error():
    from cuda.bindings import driver as cu

    assert driver.check((cu.CUresult.CUDA_SUCCESS, 5), "x") == (5,)
    with pytest.raises(CudaDriverError, match="loading the cubin failed: "
                                              "CUDA_ERROR_NO_BINARY_FOR_GPU") as info:
        driver.check((cu.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU,), "loading the cubin")
    assert info.value.name == "CUDA_ERROR_NO_BINARY_FOR_GPU"
    assert "architecture" in str(info.value)


def test_device_info_arch():
    d = driver.DeviceInfo(0, "GPU", (9, 0), 1024, (1024, 1024, 64), (2**31 - 1, 65535, 65535),
                          48 * 1024, 227 * 1024, 132, 32, 80 << 30, (13, 0))
    # Hopper builds for its arch-specific target (wgmma); others for the plain one
    assert d.arch == "sm_90a" and d.max_dynamic_shared == 227 * 1024
    assert dataclasses.replace(d, compute_capability=(8, 0)).arch == "sm_80"
