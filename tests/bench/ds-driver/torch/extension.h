// SPDX-License-Identifier: GPL-2.0-only
/*
 * torch/extension.h - a minimal, torch-free stand-in for the part of
 * libtorch that DeepSpeed's AIO handle uses (csrc/aio/py_lib/*.cpp, via
 * deepspeed_py_aio.h), so that DeepSpeed's unmodified sources compile into
 * tests/bench/ds-driver without Python or torch.  Checked against DeepSpeed
 * v0.16.4 (the tree the bench pins; version.txt 0.16.5 on master just after
 * it has the same AIO sources).
 *
 * A Tensor here is a view of host memory the driver owns: a pointer, a byte
 * count and a "pinned" flag; its element type is always one byte.  Every
 * member DeepSpeed calls is below, with what it does in DeepSpeed's control
 * flow.  What the driver passes takes the same branches as in a real run
 * with the ZeRO-Infinity swappers' page-locked buffers: cpu_op_desc_t uses
 * no bounce buffer and finish() copies nothing, because the tensor is
 * either the handle's own new_cpu_locked_tensor (from_blob below: not
 * is_pinned(), as in torch, but is_managed() by deepspeed_pin_tensor_t) or,
 * with --buffer plain, a CPU tensor with is_pinned() true (as a torch
 * pin_memory() tensor is).  Never used on those branches, and so only shaped to compile:
 * copy_(), to(), the CUDA/XPU checks (always false: no device here).
 */
#ifndef TSWAP_DS_TORCH_STANDIN_H
#define TSWAP_DS_TORCH_STANDIN_H

/* What DeepSpeed's sources get from <torch/extension.h> transitively. */
#include <cassert>		/* assert() in deepspeed_py_io_handle.cpp */
#include <chrono>		/* read()/write() time themselves */
#include <cstdint>
#include <cstring>		/* memcpy in copy_() */
#include <iostream>		/* std::cout messages */
#include <map>			/* deepspeed_pin_tensor_t::_locked_tensors */
#include <memory>		/* std::shared_ptr / unique_ptr */
#include <mutex>		/* thread_sync_t */
#include <string>
#include <thread>		/* the handle's std::thread workers */
#include <vector>

namespace c10 {

/* Only a CPU device exists; kCUDA/kXPU make is_cuda()/is_xpu() false. */
enum class DeviceType { CPU, CUDA, XPU };

/* One element type: a byte (sizes are in bytes everywhere here). */
enum class ScalarType { Byte };

enum class Layout { Strided };

/* torch::Device(kCUDA, index): only constructed on the (dead) CUDA branch. */
struct Device {
	DeviceType type;
	int index;
	Device(DeviceType t, int i = -1) : type(t), index(i) {}
};

/* A tensor's dtype(): maps back to ScalarType::Byte. */
struct TypeMeta {
	ScalarType st = ScalarType::Byte;
};

} // namespace c10

namespace at {

using c10::ScalarType;
using c10::Device;
using c10::DeviceType;

/* TensorOptions: each setter returns a copy, as torch's does. */
struct TensorOptions {
	c10::TypeMeta dtype_;
	TensorOptions dtype(c10::TypeMeta t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
	TensorOptions dtype(ScalarType s) const { TensorOptions o = *this; o.dtype_.st = s; return o; }
	TensorOptions layout(c10::Layout) const { return *this; }
	TensorOptions device(DeviceType) const { return *this; }
	TensorOptions requires_grad(bool) const { return *this; }
	c10::TypeMeta dtype() const { return dtype_; }
};

struct Tensor {
	void *ptr_ = nullptr;		/* host memory, owned by the driver */
	int64_t nbytes_ = 0;
	bool pinned_ = false;		/* page-locked, as torch's pin_memory() */

	Tensor() = default;
	Tensor(void *p, int64_t n, bool pinned) : ptr_(p), nbytes_(n), pinned_(pinned) {}

	size_t nbytes() const { return (size_t)nbytes_; }
	int64_t numel() const { return nbytes_; }	/* one-byte elements */
	void *data_ptr() const { return ptr_; }
	bool is_cpu() const { return true; }
	bool is_pinned() const { return pinned_; }
	bool is_cuda() const { return false; }
	bool is_xpu() const { return false; }
	int get_device() const { return -1; }	/* torch: -1 for CPU tensors */
	c10::TypeMeta dtype() const { return c10::TypeMeta(); }
	c10::Layout layout() const { return c10::Layout::Strided; }
	ScalarType scalar_type() const { return ScalarType::Byte; }
	/* Host memory is contiguous: the same view, as torch returns self. */
	Tensor contiguous() const { return *this; }
	/* Bounce-buffer copies (unpinned buffers only): byte copy. */
	Tensor &copy_(const Tensor &src)
	{
		memcpy(ptr_, src.ptr_, (size_t)(src.nbytes_ < nbytes_ ? src.nbytes_ : nbytes_));
		return *this;
	}
	/* Device moves (CUDA/XPU branches, never taken): no-op. */
	Tensor to(Device, bool = false) const { return *this; }
	Tensor to(DeviceType) const { return *this; }
};

/* deepspeed_pin_tensor_t::alloc wraps its page-locked block in a tensor. */
inline Tensor from_blob(void *p, int64_t numel, const TensorOptions &)
{
	return Tensor(p, numel, false);
}

} // namespace at

namespace torch {

using at::Tensor;
using at::TensorOptions;
using c10::Device;
using c10::ScalarType;
constexpr c10::DeviceType kCPU = c10::DeviceType::CPU;
constexpr c10::DeviceType kCUDA = c10::DeviceType::CUDA;
constexpr c10::DeviceType kXPU = c10::DeviceType::XPU;

inline ScalarType typeMetaToScalarType(c10::TypeMeta t) { return t.st; }
inline size_t elementSize(ScalarType) { return 1; }

} // namespace torch

#endif
