"""Forms of the dashboard pages: pasted/uploaded messages and strategy parameters.

Strategy parameter forms are built from the strategy package's own parameter spec
(:func:`memoryboard.strategies.context_param_spec`), so the playground never hard-codes a strategy's
parameters; the values are validated again by the strategy itself (``parse_params``).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from memoryboard.agents_config import get_agents_config
from memoryboard.jsonguard import JSONGuardError, parse_json
from memoryboard.models import MemoryType
from memoryboard.models.labels import role_label
from memoryboard.strategies import (
    ParamSpec,
    StrategyInputError,
    context_param_spec,
    memory_param_spec,
    read_conversation,
)

MAX_UPLOAD_BYTES = 5 * 1024 * 1024
MAX_MESSAGES = 20_000


class MessagesInputError(ValueError):
    """Pasted or uploaded messages that cannot be used; the message names the place at fault."""


def _guard_error(exc: JSONGuardError, prefix: str = "") -> MessagesInputError:
    """What the one JSON guard refused (nesting, Infinity/NaN/1e400, lone surrogates), naming the field."""
    field = prefix + exc.field
    field = f"messages{field}" if field.startswith("[") else field  # a pasted bare list
    return MessagesInputError(f"{field}: {exc.message}" if field else exc.message)


def _load_json_or_lines(text: str) -> Any:
    """JSON, or JSON Lines (one message object per non-blank line) when the text is not one JSON value;
    either way through the one JSON guard."""
    try:
        return parse_json(text)
    except JSONGuardError as exc:
        if exc.syntax is None:
            raise _guard_error(exc) from None
        first_error = exc.syntax
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(parse_json(line))
            except JSONGuardError as exc:
                if exc.syntax is None:
                    raise _guard_error(exc, f"[{len(items)}]") from None
                raise MessagesInputError(
                    _("JSON Lines: line %(line)s, column %(col)s: %(msg)s")
                    % {"line": number, "col": exc.syntax.colno, "msg": exc.syntax.msg}
                ) from None
        return items
    raise MessagesInputError(
        _("JSON syntax error at line %(line)s, column %(col)s: %(msg)s")
        % {"line": first_error.lineno, "col": first_error.colno, "msg": first_error.msg}
    )


def parse_messages_json(text: str, *, format: str | None = None) -> list[Any]:
    """Parse a pasted or uploaded agent trace into its list of messages, checked by the strategy package.

    Accepted: a JSON list of messages; a request body with ``messages`` (OpenAI Chat Completions or
    Anthropic Messages, whose top-level ``system`` becomes a leading system message); or JSON Lines, one
    message per line. Messages are OpenAI (``content`` null or parts, ``tool_calls``, ``tool`` results) or
    Anthropic (blocks, ``tool_use`` / ``tool_result``), detected or named by ``format``.

    Args:
        text: The pasted text or the file's content.
        format: ``"openai"``, ``"anthropic"`` or ``None`` (detect).

    Returns:
        The messages as they came (a strategy's kept messages are these very objects).

    Raises:
        MessagesInputError: With a message naming the problem, e.g. ``messages[3].tool_calls[0].id: ...``.
    """
    data = _load_json_or_lines(text)
    system = None
    if isinstance(data, dict) and "messages" in data:
        system = data.get("system")
        data = data["messages"]
    if not isinstance(data, list):
        raise MessagesInputError(_("messages: expected a JSON list of {\"role\": ..., \"content\": ...} objects"))
    if not data:
        raise MessagesInputError(_("messages: the list is empty"))
    if len(data) > MAX_MESSAGES:
        raise MessagesInputError(
            _("messages: at most %(max)s messages are accepted, got %(n)s") % {"max": MAX_MESSAGES, "n": len(data)}
        )
    try:
        read_conversation(data, format=format or None, system=system)
    except StrategyInputError as exc:
        raise MessagesInputError(f"{exc.field}: {exc.message}") from None
    if system is not None:
        data = [{"role": "system", "content": system}, *data]
    return data


class MessagesInputForm(forms.Form):
    """Messages to try the strategies on: pasted JSON or an uploaded ``.json`` file."""

    messages_json = forms.CharField(
        label=_("Messages (JSON)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false",
                                     "placeholder": '[{"role": "user", "content": "..."}, ...] / {"messages": [...]} / JSON Lines'}),
    )
    messages_file = forms.FileField(label=_("or upload a .json or .jsonl file"), required=False)
    format = forms.ChoiceField(
        label=_("Format"),
        required=False,
        choices=[("", _("detect")), ("openai", _("OpenAI Chat Completions")), ("anthropic", _("Anthropic Messages"))],
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("messages_file")
        text = cleaned.get("messages_json") or ""
        if upload:
            if upload.size > MAX_UPLOAD_BYTES:
                raise forms.ValidationError(_("The file is larger than 5 MB."))
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError(_("The file is not UTF-8 text.")) from None
        if not text.strip():
            raise forms.ValidationError(_("Paste messages as JSON or upload a file."))
        try:
            cleaned["messages"] = parse_messages_json(text, format=cleaned.get("format") or None)
        except MessagesInputError as exc:
            raise forms.ValidationError(str(exc)) from None
        return cleaned


def _split_words(value: str) -> list[str]:
    return [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]


PARAM_LABELS = {
    "keep_first": _("keep first"),
    "keep_last": _("keep last"),
    "threshold": _("threshold"),
    "max_tokens": _("max tokens"),
    "steps": _("steps"),
    "keep_latest": _("keep latest"),
    "keep_roles": _("keep roles"),
    "assistant_keywords": _("assistant keywords"),
    "keep_tool": _("keep tool messages"),
    "min_length": _("min length"),
    "trigger_tokens": _("trigger tokens"),
    "keep": _("keep newest results"),
    "exclude_tools": _("never clear these tools"),
    "clear_at_least": _("clear at least (tokens)"),
    "clear_tool_inputs": _("clear call arguments too"),
    "trigger_fraction": _("trigger share of the window"),
    "window_tokens": _("context window (tokens)"),
    "summary_prompt": _("summary prompt"),
    "trigger_combine": _("triggers combine"),
    "placeholder": _("placeholder text"),
    "recent_turns": _("never in the last N turns"),
    "max_output_chars": _("only results longer than (characters)"),
    "preview_chars": _("preview kept (characters)"),
    "clear_thinking": _("clear older thinking"),
    "keep_thinking_turns": _("keep thinking of the last N turns"),
}

CHOICE_LABELS = {"any": _("any trigger"), "all": _("all triggers")}


def _label(name: str):
    *parents, leaf = name.split(".")
    label = PARAM_LABELS.get(leaf, leaf.replace("_", " "))
    # A composite step's parameter: the step's strategy by its API name (TRIM), as the columns are titled.
    return f"{parents[0].upper()} · {label}" if parents else label


def _form_field(spec: ParamSpec) -> forms.Field:
    label = _label(spec.name)
    if spec.type == "int":
        # Optional: an emptied field falls back to the design's default.
        return forms.IntegerField(
            label=label, initial=spec.default, required=False, min_value=spec.min, max_value=spec.max, help_text=spec.description,
            widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
        )
    if spec.type == "float":
        return forms.FloatField(
            label=label, initial=spec.default, required=False, min_value=spec.min, max_value=spec.max,
            help_text=spec.description, widget=forms.NumberInput(attrs={"step": "0.05", "inputmode": "decimal"}),
        )
    if spec.type == "text":
        return forms.CharField(label=label, initial=spec.default, required=False, help_text=spec.description,
                               widget=forms.Textarea(attrs={"rows": 2}))
    if spec.type == "line":
        return forms.CharField(label=label, initial=spec.default, required=False, help_text=spec.description,
                               max_length=500)
    if spec.type == "choice":
        return forms.ChoiceField(label=label, initial=spec.default, required=False, help_text=spec.description,
                                 choices=[(c, CHOICE_LABELS.get(c, c)) for c in spec.choices],
                                 widget=forms.RadioSelect)
    if spec.type == "bool":
        return forms.BooleanField(label=label, initial=spec.default, required=False, help_text=spec.description)
    if spec.type == "roles":
        return forms.MultipleChoiceField(
            label=label, initial=list(spec.default), required=False, help_text=spec.description,
            choices=[(c, role_label(c)) for c in spec.choices], widget=forms.CheckboxSelectMultiple,
        )
    # "strings" and "steps": comma-separated text (steps are ordered, so not a checkbox set).
    return forms.CharField(
        label=label, initial=", ".join(spec.default), required=spec.type == "steps", help_text=spec.description,
    )


class StrategyParamsForm(forms.Form):
    """The parameters of one strategy, built from its :class:`ParamSpec` list.

    The form prefix is the strategy name (lower case) so that several strategies' forms live on one page.
    """

    def __init__(self, *args, kind: str, strategy: str, **kwargs):
        self.kind = kind
        self.strategy = strategy
        self.specs = context_param_spec(strategy) if kind == "context" else memory_param_spec(strategy)
        kwargs.setdefault("prefix", f"{kind[0]}-{strategy.lower()}")
        super().__init__(*args, **kwargs)
        for spec in self.specs:
            self.fields[spec.name] = _form_field(spec)

    def params(self) -> dict[str, Any]:
        """The strategy's JSON parameters (COMPOSITE step parameters nested by their dotted name).

        Call after ``is_valid()``; for an unbound form the defaults are returned.
        """
        data = self.cleaned_data if self.is_bound else {s.name: self.fields[s.name].initial for s in self.specs}
        params: dict[str, Any] = {}
        for spec in self.specs:
            value = data.get(spec.name)
            if spec.type in ("strings", "steps") and isinstance(value, str):
                value = _split_words(value)
            if spec.type in ("int", "float", "line", "choice") and value in (None, ""):
                value = spec.default
            target = params
            *parents, leaf = spec.name.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = list(value) if isinstance(value, tuple) else value
        return params

    def first_error(self) -> str | None:
        """``"field: message"`` of the first invalid field, for a one-line error in the page."""
        for name, errors in self.errors.items():
            return f"{name}: {errors[0]}" if name != "__all__" else str(errors[0])
        return None


class MemorySwitchForm(forms.Form):
    """An end user's memory switch (issue 7)."""

    use_memories = forms.BooleanField(label=_("Use my memories"), required=False)
    save_memories = forms.BooleanField(label=_("Save new memories"), required=False)


class MemorySearchForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=500)
    mode = forms.ChoiceField(
        label=_("Mode"), required=False, initial="text",
        choices=[("text", _("Text")), ("semantic", _("Semantic"))],
    )


def agent_choices() -> list[tuple[str, str]]:
    """``(agent id, label)`` of the agents that keep long-term memory (agents.yaml)."""
    return [
        (agent_id, cfg.label)
        for agent_id, cfg in sorted(get_agents_config().agents.items())
        if cfg.long_term_memory.enabled
    ]


class MemoryAddForm(forms.Form):
    """Manual add (issue 7): an item the user writes, ``source="manual"``, embedded on save."""

    agent = forms.ChoiceField(label=_("Agent"))
    memory_type = forms.ChoiceField(label=_("Type"))
    content = forms.CharField(label=_("Content"), max_length=20_000,
                              widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = agent_choices()
        self.fields["memory_type"].choices = MemoryType.choices


class MemoryEditForm(forms.Form):
    """An owner's change to an item's text (re-embedded and audited by ``memory_update``)."""

    content = forms.CharField(label=_("Text"), max_length=20_000, widget=forms.Textarea(attrs={"rows": 3}))


class MemoryBulkForm(forms.Form):
    """A bulk action on the user's own active items: the selected ones, or all matching a filter."""

    ACTIONS = [("delete", _("Delete")), ("pause", _("Pause")), ("resume", _("Resume"))]

    action = forms.ChoiceField(label=_("Action"), choices=ACTIONS)
    scope = forms.ChoiceField(
        label=_("Apply to"), initial="selected",
        choices=[("selected", _("the selected items")), ("filter", _("every item matching the filter"))],
    )
    ids = forms.MultipleChoiceField(required=False)  # choices checked against the user's items by the view
    memory_type = forms.ChoiceField(label=_("Type"), required=False)
    agent = forms.CharField(label=_("Agent"), required=False, max_length=255)
    q = forms.CharField(label=_("Containing"), required=False, max_length=500)
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["memory_type"].choices = [("", _("any type")), *MemoryType.choices]
        # The selection is any string; ownership is enforced by the queryset, never by the form.
        self.fields["ids"].valid_value = lambda value: True

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("scope") == "selected" and not cleaned.get("ids"):
            raise forms.ValidationError(_("Select at least one item."))
        return cleaned


class PauseRulesForm(forms.Form):
    """Pause every item of some types or of some agents (issue 7); items are kept, never retrieved."""

    types = forms.MultipleChoiceField(label=_("Pause these types"), required=False,
                                      widget=forms.CheckboxSelectMultiple)
    agents = forms.MultipleChoiceField(label=_("Pause these agents"), required=False,
                                       widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["types"].choices = MemoryType.choices
        namespaces: dict[str, str] = {}
        for agent_id, cfg in sorted(get_agents_config().agents.items()):
            if cfg.long_term_memory.enabled:
                namespaces.setdefault(cfg.long_term_memory.namespace, cfg.label)
        self.fields["agents"].choices = list(namespaces.items())


class AskFirstForm(forms.Form):
    """The agents whose new memories wait for the user's approval ("ask me before you remember")."""

    agents = forms.MultipleChoiceField(label=_("Ask me before these agents remember something"), required=False,
                                       widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agents"].choices = [(agent_id, cfg.label) for agent_id, cfg in
                                         sorted(get_agents_config().agents.items())
                                         if cfg.long_term_memory.enabled]


class SupportItemEditForm(forms.Form):
    """Support's change to one of a person's items: its text and its type (re-embedded and audited)."""

    content = forms.CharField(label=_("Text"), max_length=20_000, widget=forms.Textarea(attrs={"rows": 3}))
    memory_type = forms.ChoiceField(label=_("Type"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["memory_type"].choices = MemoryType.choices


class SupportArchiveForm(forms.Form):
    """Why support archives an item, in their words (kept in the audit log and the state history)."""

    note = forms.CharField(label=_("Why"), max_length=200, strip=True,
                           error_messages={"required": _("Say why the item is archived.")})
