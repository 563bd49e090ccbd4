"""Audit entries say whose data they are about (``subject_user_id``, indexed), filled for existing rows.

The data step reads each entry as ``memoryboard.audit`` does when it writes one: the namespace an item's
snapshot recorded, else the item's own while it exists; the user an entry names; a bulk delete's
``user_id``; a conversation's owner. Entries an erase anonymised recorded nothing and stay empty.
"""

from django.db import migrations, models

from memoryboard.models.audit import audit_subjects

BATCH = 2000


def fill_subjects(apps, schema_editor):
    AuditLog = apps.get_model("memoryboard", "AuditLog")
    models = tuple(apps.get_model("memoryboard", name) for name in ("LongTermMemory", "ChatMessage",
                                                                       "ConversationOwner"))
    last = 0
    while True:
        rows = list(AuditLog.objects.filter(pk__gt=last, subject_user_id="").order_by("pk")
                    .only("pk", "object_type", "object_id", "before", "after", "subject_user_id")[:BATCH])
        if not rows:
            return
        last = rows[-1].pk
        audit_subjects(rows, models=models)
        AuditLog.objects.bulk_update([r for r in rows if r.subject_user_id], ["subject_user_id"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("memoryboard", "0019_memory_versions_merged_reason"),
    ]

    operations = [
        migrations.AddField(
            model_name="auditlog",
            name="subject_user_id",
            field=models.CharField(blank=True, db_index=True, default="", max_length=255, verbose_name="subject user"),
        ),
        migrations.RunPython(fill_subjects, migrations.RunPython.noop),
    ]
