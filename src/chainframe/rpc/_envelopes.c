/* A batch answer's envelopes, counted without holding the GIL.

   Before the client hands a batch answer on unparsed (AsyncClient._batch_body), it checks that the answer is plainly
   complete and error-free: one "jsonrpc" member per call and no "error" member anywhere. Python's bytes.count and
   `in` made that two scans holding the GIL, on the event loop's thread: a quarter of a local receipts run's CPU
   samples (perf, benchmarks/compare.py's chain). Here both searches are one pass, the GIL released, over the places
   where a quote is followed by 'e' or 'j' (_find_pair.h), and it stops at an "error". Optional, like the scanner:
   without it the Python scans run. */

#include <Python.h>
#include <string.h>

#include "../_find_pair.h"

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer body;
    Py_ssize_t members = 0;
    int error = 0;
    if (!PyArg_ParseTuple(args, "y*", &body)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *p = (const unsigned char *)body.buf, *end = p + body.len, *next_member = p;
    while ((p = find_pair(p, end, '"', 'e', 'j')) != NULL) {
        if ((size_t)(end - p) >= 7 && memcmp(p, "\"error\"", 7) == 0) {
            error = 1;
            members = 0;
            break;
        }
        if (p >= next_member && (size_t)(end - p) >= 9 && memcmp(p, "\"jsonrpc\"", 9) == 0) {
            members++;  /* counted without overlaps, as bytes.count does */
            next_member = p + 9;
        }
        p++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&body);
    return Py_BuildValue("(nO)", members, error ? Py_True : Py_False);
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS,
     "scan(body) -> (occurrences of '\"jsonrpc\"', whether '\"error\"' occurs); the count is 0 when it does"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_envelopes", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__envelopes(void) { return PyModule_Create(&MODULE); }
