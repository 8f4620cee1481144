"""``gpuroof models``: the built-in kernel models, their parameters and formulas."""

from __future__ import annotations

import argparse

from roofline import models

from ._args import print_json
from ._progress import progress_bar

__all__ = ["PARSERS"]


def _models_parser(p: argparse.ArgumentParser) -> None:
    """``gpuroof models``'s options."""
    p.description = (
        "The built-in kernel models that roofline, plot, predict and cliffs take as --model NAME "
        "--param KEY=VALUE: what each thread does, the parameters with their defaults, and an example "
        "call. Models: " + ", ".join(models.names()) + "."
    )
    p.add_argument("name", nargs="?", default=None, choices=models.names(), metavar="MODEL",
                   help="describe one model in full: " + ", ".join(models.names()))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_handle)


def _value(value: object) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _signature(info: models.ModelInfo) -> str:
    return ", ".join(p.name if p.required else f"{p.name}={_value(p.default)}" for p in info.parameters)


def _example(info: models.ModelInfo) -> str:
    return " ".join(f"--param {k}={_value(v)}" for k, v in info.example.items())


def _handle(args: argparse.Namespace) -> int:
    with progress_bar(args) as bar:
        infos = models.catalog(progress=bar) if args.name is None else (models.describe(args.name),)
    if args.json:
        print_json([info.model_dump(mode="json") for info in infos])
        return 0
    if args.name is None:
        width = max(len(info.name) for info in infos)
        for info in infos:
            print(f"{info.name:<{width}}  {info.summary}")
            print(f"{'':<{width}}  ({_signature(info)})  {info.formula}")
        print("\n`gpuroof models NAME` describes one; `gpuroof predict --model NAME --param KEY=VALUE` uses it.")
        return 0
    info = infos[0]
    print(f"{info.name}({_signature(info)})")
    print(f"  {info.summary}")
    print(f"  formula: {info.formula}")
    for variant, formula in info.variants.items():
        print(f"    {variant:<16} {formula}")
    print("  parameters:")
    for p in info.parameters:
        default = "required" if p.required else f"default {_value(p.default)}"
        choices = f"; one of {', '.join(p.choices)}" if p.choices else ""
        print(f"    {p.name:<10} {p.annotation:<16} {default}{choices}. {p.description}".rstrip())
    print(f"  example: gpuroof predict --model {info.name} {_example(info)}")
    return 0


PARSERS = {"models": _models_parser}
