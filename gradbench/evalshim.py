#!/usr/bin/env python3
"""evalshim.py EVAL_SCRIPT ARGS... - run a GradBench eval under pydantic 1
(Debian's), which lacks pydantic 2's BaseModel.model_validate: the shim adds
it as parse_obj, then runs the eval as its own __main__."""
import runpy
import sys

import pydantic

if not hasattr(pydantic.BaseModel, "model_validate"):
    pydantic.BaseModel.model_validate = classmethod(
        lambda cls, obj: cls.parse_obj(obj))

script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
