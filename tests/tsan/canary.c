/* A deliberate data race, built with -fsanitize=thread like the agent
 * under test: tests/tsan/test_tsan_agent.py imports it first and requires
 * ThreadSanitizer's report, so that a pass of the agent's run means "no
 * race seen", not "ThreadSanitizer was not running in this interpreter". */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>

static long counter;

static void *bump(void *arg)
{
    for (int i = 0; i < 100000; i++)
        counter++;
    return arg;
}

/* race() -> int (new reference): two threads add to one unguarded long */
static PyObject *race(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    pthread_t t;
    if (pthread_create(&t, NULL, bump, NULL)) return PyErr_SetFromErrno(PyExc_OSError);
    bump(NULL);
    pthread_join(t, NULL);
    return PyLong_FromLong(counter);
}

static PyMethodDef methods[] = {{"race", race, METH_NOARGS, "race two threads"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "hotline_tsan_canary", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hotline_tsan_canary(void)
{
    return PyModule_Create(&module);
}
