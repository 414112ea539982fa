"""Compiled code for the hot loops: staged programs lowered to C and the samplers in C, built
with the system C compiler through cffi (API mode) and cached on disk (see ``build``).

This layer sits beside the transformations: it reads staged programs and knows nothing of
``graph`` or ``ppl``, which call into it.
"""
