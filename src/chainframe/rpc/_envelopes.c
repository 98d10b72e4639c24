/* A batch answer's envelopes, counted without holding the GIL.

   Before the client hands a batch answer on unparsed (AsyncClient._batch_body), it checks that the answer is plainly
   complete and error-free: one "jsonrpc" member per call and no "error" member anywhere. Python's bytes.count and
   `in` made that two scans holding the GIL, on the event loop's thread: a quarter of a local receipts run's CPU
   samples (perf, benchmarks/compare.py's chain). Here the same two searches run with memmem, the GIL released, and
   the count is skipped once an "error" is found. Optional, like the scanner: without it the Python scans run. */

#include <Python.h>
#include <string.h>

static Py_ssize_t occurrences(const char *p, const char *end, const char *needle, size_t n, int first_only) {
    Py_ssize_t found = 0;
    while ((size_t)(end - p) >= n) {
        const char *hit = memmem(p, (size_t)(end - p), needle, n);
        if (hit == NULL) break;
        found++;
        if (first_only) break;
        p = hit + n;
    }
    return found;
}

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    Py_ssize_t members = 0, errors;
    if (!PyArg_ParseTuple(args, "y*", &body)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    const char *p = (const char *)body.buf, *end = p + body.len;
    errors = occurrences(p, end, "\"error\"", 7, 1);
    if (!errors) members = occurrences(p, end, "\"jsonrpc\"", 9, 0);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&body);
    return Py_BuildValue("(nO)", members, errors ? Py_True : Py_False);
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS,
     "scan(body) -> (occurrences of '\"jsonrpc\"', whether '\"error\"' occurs); the count is 0 when it does"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_envelopes", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__envelopes(void) { return PyModule_Create(&MODULE); }
