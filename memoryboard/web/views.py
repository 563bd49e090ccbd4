from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render


@login_required
def home(request):
    return render(request, "home.html")


@login_required
def playground(request):  # replaced by the playground module
    return render(request, "home.html")


@login_required
def my_memories(request):  # replaced by the "My memories" module
    return render(request, "home.html")
