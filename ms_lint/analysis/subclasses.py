"""The classes of the project that derive from a class, found in the files of the run: what a template's subclasses,
in other modules, define on `self`.

A template calls a hook it leaves to subclasses (SMPD's `_fasterRCNN.create_architecture` calls
`self._init_modules()`, which `vgg16(_fasterRCNN)` defines, building the layers the template's `construct` reads).
The project index knows each module's classes and their bases, not who derives from whom: the files whose text
spells the class's name are read for subclasses, once per class asked about (templates are rare).
"""
from __future__ import annotations

import weakref
from typing import Dict, FrozenSet, List, Optional, Tuple

from ms_lint.source import module_name, read_bytes

# index -> (count of its files, qualname -> answer): asked once per template and run
_answers: "weakref.WeakKeyDictionary[object, Tuple[int, Dict[str, Optional[FrozenSet[str]]]]]" = \
    weakref.WeakKeyDictionary()


def defined_by_subclasses(index, qualname: str) -> Optional[FrozenSet[str]]:
    """The attributes, methods and properties the linted files' subclasses of `qualname` define (through their
    project bases too, and their own subclasses, three levels down), or None when no linted file derives from it
    (a run of one file, or an unused template)."""
    files = index.linted_files()
    known = _answers.get(index)
    if known is None or known[0] != len(files):
        known = _answers[index] = (len(files), {})
    if qualname not in known[1]:
        known[1][qualname] = _defined_by_subclasses(index, qualname, files)
    return known[1][qualname]


def _defined_by_subclasses(index, qualname: str, files: List[str], depth: int = 0) -> Optional[FrozenSet[str]]:
    name = qualname.rpartition(".")[2].encode()
    defined: set = set()
    found = False
    subclasses = []
    for path in files:
        if name not in read_bytes(path):
            continue
        with index.importing(path):
            summary = index.module(module_name(path))
            for cls in summary.classes.values() if summary is not None else ():
                chain = [cls, *_project_bases(index, cls)]
                if any(_same_class(base, qualname) for current in chain for base in current.bases if base):
                    found = True
                    subclasses.append(cls.qualname)
                    for current in chain:
                        defined |= current.attributes | current.methods | current.properties
    # and theirs, which other files derive by the subclass's name (minddet's `PointPillars(SingleStageDetector)`,
    # `SingleStageDetector(BaseDetector)`: the detector that defines `construct` is two levels down)
    for subclass in subclasses if depth < _LEVELS else ():
        below = _defined_by_subclasses(index, subclass, files, depth + 1)
        if below is not None:
            defined |= below
    return frozenset(defined) if found else None


_LEVELS = 3  # how far down subclasses are followed


def _project_bases(index, summary, depth: int = 0):
    """The project classes `summary` derives from (depth first), as the index finds them."""
    if depth > 5:
        return
    for base in summary.bases:
        found = index.lookup_class(base) if base else None
        if found is not None:
            yield found
            yield from _project_bases(index, found, depth + 1)


def _same_class(base: str, qualname: str) -> bool:
    """Does `base` name the class `qualname`, whose module may be named from another import root (`model.` on
    `faster_rcnn.faster_rcnn`: `model/` is a namespace directory, the package root below it)?"""
    if base == qualname:
        return True
    shorter, longer = sorted((base, qualname), key=len)
    return longer.endswith("." + shorter) and shorter.count(".") >= 1
