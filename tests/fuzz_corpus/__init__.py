"""Tools with realistic planted bugs (``planted``) and correct ones (``controls``) for ``loopkit fuzz``."""
