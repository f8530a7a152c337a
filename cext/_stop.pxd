# The stop flag of the long kernel loops (cext/_stop.pyx): what kernels cimport, by the extension's full name
# (`from llsvm._ext._stop cimport stop_requested`; setup.py says why).

cdef int stop_requested() noexcept nogil
cdef int check_stop() except -1
