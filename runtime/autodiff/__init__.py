"""Automatic differentiation: the core every op binds through (``core``: Primitive, Trace,
Tracer, bind) and the transformations over it (``api``: grad, jvp, vjp…; ``batching``: vmap;
``custom``: user primitives; ``check``: gradient checks).

The package imports none of its modules: the core sits below the ops and the transformations
above them, so importing ``autodiff.core`` must not pull the transformations in. Import from the
modules (``tensorbridge`` re-exports the public names).
"""
