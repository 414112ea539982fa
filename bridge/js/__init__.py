"""tensorbridge.bridge.js: the Python side of the JavaScript client (``js-client/``), the
counterpart of :mod:`tensorbridge.bridge.r`.

* :mod:`.host` — :class:`~.host.JsHost`, what the npm package calls through Pyodide: the wire,
  tagged fast paths, converters the JS client adds to the "js" tables.
* :mod:`.boot` — start-up of the runtime inside Pyodide (``core.js`` imports it).
* :mod:`.layers` — the Python half of ``tb.layers`` / ``tb.train`` (``layers.js``).
* :mod:`.ppl` — the Python half of ``tb.ppl`` / ``tb.mcmc`` (``ppl.js``).

The "js" tables' built-in converters (numbers, strings, arrays) live in
:mod:`tensorbridge.bridge.builtins_js`, installed when the bridge is imported, as the R ones
are; importing this package installs nothing more (the host does, when it is made).
"""
