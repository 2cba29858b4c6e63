/* spin.c: hotline_spin, a tiny C extension the profiler tests use as known
 * native work: spin(seconds) busy-loops in C holding the GIL,
 * spin_nogil(seconds) does the same with the GIL released. Both return the
 * number of loop iterations (so the loop cannot be optimised away). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <time.h>

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned long long burn(double seconds)
{
    volatile unsigned long long n = 0;
    double end = mono() + seconds;
    while (mono() < end)
        for (int i = 0; i < 1000; i++)
            n++;
    return n;
}

static PyObject *spin(PyObject *self, PyObject *args)
{
    (void)self;
    double s;
    if (!PyArg_ParseTuple(args, "d", &s)) return NULL;
    return PyLong_FromUnsignedLongLong(burn(s));
}

static PyObject *spin_nogil(PyObject *self, PyObject *args)
{
    (void)self;
    double s;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "d", &s)) return NULL;
    Py_BEGIN_ALLOW_THREADS n = burn(s);
    Py_END_ALLOW_THREADS return PyLong_FromUnsignedLongLong(n);
}

static PyMethodDef methods[] = {
    {"spin", spin, METH_VARARGS, "busy-loop in C for seconds, GIL held"},
    {"spin_nogil", spin_nogil, METH_VARARGS, "busy-loop in C for seconds, GIL released"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "hotline_spin", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hotline_spin(void)
{
    return PyModule_Create(&moddef);
}
