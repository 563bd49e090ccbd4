"""My memories → Import: upload or paste a JSON file, see the dry-run summary, then import."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _, ngettext
from django.utils.translation import gettext_lazy

from memoryboard.ltm.write.importing import MemoryImportError, import_items_from_text, memory_import
from memoryboard.roles import platform_user_id
from memoryboard.web.forms import agent_choices
from memoryboard.web.my_memories.common import writes_own_memories

MAX_FILE_BYTES = 5 * 1024 * 1024
PREVIEW_ROWS = 100  # rows listed under the preview; the counts above them cover the whole file
# The fields an import error names, as the page says them (the API keeps the field names).
FIELD_LABELS = {
    "item": gettext_lazy("Item"), "content": gettext_lazy("Text"), "type": gettext_lazy("Type"),
    "created_at": gettext_lazy("Created"), "agent": gettext_lazy("Agent"),
}


class MemoryImportForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("JSON file"), required=False)
    text = forms.CharField(label=gettext_lazy("…or paste JSON"), required=False,
                           widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}))
    mode = forms.ChoiceField(label=gettext_lazy("When an item is already there"), initial="skip", choices=[
        ("skip", gettext_lazy("Skip it")), ("overwrite", gettext_lazy("Overwrite it (type and wording)"))])
    agent = forms.ChoiceField(label=gettext_lazy("Agent for items that name none"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = agent_choices()
        self.fields["agent"].initial = settings.MEMORYBOARD_DEFAULT_AGENT

    def clean(self):
        data = super().clean()
        upload = data.get("file")
        if upload is not None:
            if upload.size > MAX_FILE_BYTES:
                raise forms.ValidationError(_("The file is larger than 5 MB."))
            try:
                data["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise forms.ValidationError(_("The file is not UTF-8 text.")) from exc
        if not (data.get("text") or "").strip():
            raise forms.ValidationError(_("Choose a file or paste JSON."))
        return data


@login_required
@writes_own_memories
def memory_import_page(request):
    """GET: the form. POST ``step=preview``: the dry-run summary. POST ``step=apply``: the import."""
    form = MemoryImportForm(request.POST or None, request.FILES or None)
    context = {"form": form, "summary": None}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        apply = request.POST.get("step") == "apply"
        try:
            summary = memory_import(items=import_items_from_text(data["text"]), user_id=platform_user_id(request.user),
                                    actor=request.user, mode=data["mode"], dry_run=not apply, agent_id=data["agent"])
        except MemoryImportError as exc:
            form.add_error(None, exc.message)
        else:
            if apply and not summary.invalid:
                flash.success(request, ngettext("%(count)d memory imported.", "%(count)d memories imported.",
                                                summary.imported) % {"count": summary.imported})
                return redirect("my-memories")
            names = dict(agent_choices())
            # Items are numbered from 1 on the page, as a person counts them in their file.
            context.update(summary=summary, text=data["text"], mode=data["mode"], agent=data["agent"],
                           invalid_rows=[{**e, "number": e["index"] + 1,
                                          "field_label": FIELD_LABELS.get(e["field"], e["field"])}
                                         for e in summary.invalid],
                           preview_rows=[{**row, "number": row["index"] + 1,
                                          "agent_name": names.get(row["agent"], row["agent"])}
                                         for row in summary.rows[:PREVIEW_ROWS]],
                           more_rows=max(0, len(summary.rows) - PREVIEW_ROWS))
    return render(request, "web/my_memories_import.html", context, status=400 if form.errors else 200)
