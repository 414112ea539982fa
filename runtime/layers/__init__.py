"""Layers and models, TensorFlow.js / Keras style, on any tensorbridge backend.

    import tensorbridge as tb
    from tensorbridge.runtime import layers as L

    x = L.input(shape=(784,))                                 # batch dimension unknown (None)
    h = L.Dense(128, activation="relu")(x)                    # weights built on first call
    model = L.Model(x, L.Dense(10, activation="softmax")(h))
    model.summary()
    model.compile(optimizer=L.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x_train, y_train, epochs=5, batch_size=64, validation_split=0.1,
                        callbacks=[L.EarlyStopping(patience=2, restore_best_weights=True)])
    model.save("mlp.zip");  L.load_model("mlp.zip").predict(x_test)

The whole training step (forward, loss, gradients, optimizer update, metrics) is compiled with
``tb.function``: staged into one straight-line program on NumPy, a ``tf.function`` on TensorFlow.
Modules: ``base`` (Layer), ``core``/``merge`` (layers), ``activations``, ``initializers``,
``optimizers``, ``losses``, ``metrics``, ``callbacks``, ``progress``, ``model`` (Model),
``sequential`` (Sequential), ``executor`` (graph execution), ``training`` (compiled steps),
``primitives`` (embedding lookup, fused updates, sparse cross-entropy; their kernels are in
``backends/layer_kernels``), ``data``, ``summary``, ``serialization`` (save/load).
"""

from . import activations, callbacks, initializers, losses, metrics, optimizers
from .base import InputSpec, Layer, clear_session, register_layer
from .callbacks import (
    Callback,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    ProgbarLogger,
    TerminateOnNaN,
)
from .core import Activation, Dense, Dropout, Embedding, Flatten
from .executor import GraphExecutor
from .input_layer import Input, InputLayer, input
from .merge import Add, Average, Concatenate, Multiply, Subtract
from .model import Model
from .sequential import Sequential
from .serialization import (
    from_artifacts,
    load_model,
    load_weights,
    save_model,
    save_weights,
    to_artifacts,
)
from .symbolic import SymbolicTensor
from .variables import Variable

__all__ = [
    "Activation",
    "Add",
    "Average",
    "Callback",
    "Concatenate",
    "Dense",
    "Dropout",
    "EarlyStopping",
    "Embedding",
    "Flatten",
    "GraphExecutor",
    "History",
    "Input",
    "InputLayer",
    "InputSpec",
    "LambdaCallback",
    "Layer",
    "LearningRateScheduler",
    "Model",
    "Multiply",
    "ProgbarLogger",
    "Sequential",
    "Subtract",
    "SymbolicTensor",
    "TerminateOnNaN",
    "Variable",
    "activations",
    "callbacks",
    "clear_session",
    "from_artifacts",
    "initializers",
    "input",
    "load_model",
    "load_weights",
    "losses",
    "metrics",
    "optimizers",
    "register_layer",
    "save_model",
    "save_weights",
    "to_artifacts",
]
