"""Click's usage errors (an unknown option or command, a value of the wrong type, a missing
value or argument) told in one line, the way benchsite's own errors are.

Click prints a usage box of three or four lines; :func:`one_line_usage` says what is wrong and
where the command's options are listed instead: ``--timeout: 'abc' is not a number; give a
number (SECONDS), see `benchsite run --help```. The CLI raises it as a :class:`UsageError`,
printed as every :class:`~benchsite.errors.BenchsiteError` is: ``error: ...``, exit 2.
"""

from __future__ import annotations

import importlib
import inspect
import types
import typing
from collections.abc import Sequence

import typer

from benchsite.errors import BenchsiteError

# the click typer runs on (its own copy in recent typer, click itself before): the module of the
# error typer exports, so that the classes caught are those its commands raise
click_errors = importlib.import_module(typer.BadParameter.__module__)
ClickException = click_errors.ClickException
NoArgsIsHelpError = getattr(click_errors, "NoArgsIsHelpError", ())  # a bare group: its help

# what a value of each annotated type must be, said to the user
KINDS = {float: "a number", int: "a whole number"}


class UsageError(BenchsiteError):
    """Click's ``error``, raised parsing ``args`` for the click group ``root``, as benchsite's
    one-line error, with click's exit status (2 for a usage error)."""

    def __init__(self, error: Exception, root: typing.Any, args: Sequence[str]) -> None:
        super().__init__(one_line_usage(error, root, args))
        self.exit_code = getattr(error, "exit_code", 2)


def one_line_usage(error: Exception, root: typing.Any, args: Sequence[str]) -> str:
    """The line (without ``error:``) for click's ``error``, raised parsing ``args`` for the
    click group ``root``."""
    path, command = _command_named(root, args)
    see = f"see `{path} --help`"
    param = getattr(error, "param", None)
    option = getattr(error, "option_name", None)
    if isinstance(error, click_errors.NoSuchOption):
        near = sorted(error.possibilities or ())
        maybe = f" (did you mean {' or '.join(near)}?)" if near else ""
        return f"no option {error.option_name}{maybe}; {see}"
    if isinstance(error, click_errors.BadOptionUsage) and option and list(args[-1:]) == [option]:
        return f"{option} needs a value{_metavar(command, option)}; {see}"
    if type(error) is click_errors.BadParameter and param is not None:
        kind = KINDS.get(declared_type(command, param.name))
        given = _given(param.opts, args)
        if kind and given is not None:
            wants = f" ({param.metavar})" if param.metavar else ""
            return f"{_name(param)}: {given!r} is not {kind}; give {kind}{wants}, {see}"
        return f"{_name(param)}: {_sentence(error.message)}; {see}"
    return f"{_sentence(error.format_message())}; {see}"


def _command_named(root: typing.Any, args: Sequence[str]) -> tuple[str, typing.Any]:
    """(``benchsite`` and the command names in ``args``, the command they name): the
    sub-commands are walked down while an argument names one."""
    names, command = ["benchsite"], root
    for arg in args:
        sub = getattr(command, "commands", {}).get(arg)
        if sub is None:
            break
        names.append(arg)
        command = sub
    return " ".join(names), command


def _name(param: typing.Any) -> str:
    """How the user wrote a parameter: its long option, or an argument's metavar."""
    longs = [opt for opt in param.opts if opt.startswith("--")]
    return longs[0] if longs else (param.metavar or param.name.upper())


def _metavar(command: typing.Any, option: str) -> str:
    for param in command.params:
        if option in param.opts and param.metavar:
            return f" ({param.metavar})"
    return ""


def declared_type(command: typing.Any, name: str) -> object:
    """The type the command's function declares for parameter ``name``, None stripped."""
    if command.callback is None:  # a group's own options
        return None
    function = inspect.unwrap(command.callback)
    try:
        hint = typing.get_type_hints(function, include_extras=True).get(name)
    except (NameError, TypeError):  # an annotation that does not resolve: no type to tell
        return None
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        hint = kinds[0] if len(kinds) == 1 else None
    return hint


def _given(opts: Sequence[str], args: Sequence[str]) -> str | None:
    """The value the last of ``opts`` in ``args`` was given (``--x v`` or ``--x=v``)."""
    given = None
    for index, arg in enumerate(args):
        if arg in opts and index + 1 < len(args):
            given = args[index + 1]
        for opt in opts:
            if opt.startswith("--") and arg.startswith(f"{opt}="):
                given = arg[len(opt) + 1 :]
    return given


def _sentence(message: str) -> str:
    """Click's message as a clause: lower-case start, no full stop, one line."""
    text = " ".join(message.split()).rstrip(".")
    return text[:1].lower() + text[1:]
