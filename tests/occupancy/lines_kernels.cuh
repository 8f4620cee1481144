// A header's inline function: its code counts on the kernel's line that calls it (--lines).
__device__ __forceinline__ float mix(float a, float b) {
    return a * b + 1.0f;
}
