"""A checksum beside each vector, indexed with the item and model (see ltm.vector_cache)."""

from django.db import migrations, models

from memoryboard.models.embedding import vector_checksum

BATCH = 2000


def fill_checksums(apps, schema_editor):
    """Checksums of the vectors stored before this migration, walked by primary key in batches."""
    embedding = apps.get_model("memoryboard", "MemoryEmbedding")
    table = embedding._meta.db_table
    connection = schema_editor.connection
    last = 0
    while True:
        rows = list(embedding.objects.filter(pk__gt=last).order_by("pk").values_list("pk", "vector")[:BATCH])
        if not rows:
            return
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {table} SET checksum = %s WHERE id = %s",
                [(vector_checksum(bytes(vector)), pk) for pk, vector in rows],
            )
        last = rows[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("memoryboard", "0002_dashboard_tables"),
    ]

    operations = [
        migrations.AddField(
            model_name="memoryembedding",
            name="checksum",
            field=models.BigIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.RunPython(fill_checksums, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="memoryembedding",
            index=models.Index(fields=["memory", "model_name", "checksum"], name="idx_embedding_checksum"),
        ),
    ]
