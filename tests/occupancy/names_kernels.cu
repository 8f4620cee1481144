// Kernel names `--kernel` must find as a user spells them (tests/occupancy/test_kernel_names.py).

// CUB's shape: kernels in a versioned inline namespace (cub::CUB_200_SM_900::...), some templates.
namespace lib {
inline namespace LIB_200_SM_900 {
namespace detail {
template <typename T, int Items>
__global__ void reduce_kernel(const T* x, T* y) {
    T s = 0;
    for (int i = 0; i < Items; ++i) s += x[threadIdx.x * Items + i];
    y[threadIdx.x] = s;
}
}  // namespace detail
template <typename T>
__global__ void scan_kernel(const T* x, T* y) { y[threadIdx.x] = x[threadIdx.x] + x[threadIdx.x + 1]; }
}  // inline namespace LIB_200_SM_900
}  // namespace lib

// Enum template arguments, which the binary holds as their values: sorter<(Mode)4, (Order)1>.
enum class Mode { Fast, Exact = 1 << 2 };
enum Order { ASC, DESC };
namespace ns {
enum class Kind : unsigned char { A = 1, B };
}

template <Mode M, Order O>
__global__ void sorter(float* x) {
    float v = x[threadIdx.x];
    if (M == Mode::Exact) v = v * v;
    x[threadIdx.x] = O == DESC ? -v : v;
}
template <ns::Kind K, int N>
__global__ void kinds(float* x) { x[threadIdx.x] += static_cast<float>(K) * N; }

template __global__ void lib::detail::reduce_kernel<float, 4>(const float*, float*);
template __global__ void lib::detail::reduce_kernel<double, 4>(const double*, double*);
template __global__ void lib::scan_kernel<int>(const int*, int*);
template __global__ void sorter<Mode::Fast, ASC>(float*);
template __global__ void sorter<Mode::Exact, DESC>(float*);
template __global__ void sorter<Mode::Fast, DESC>(float*);
template __global__ void kinds<ns::Kind::B, 3>(float*);
